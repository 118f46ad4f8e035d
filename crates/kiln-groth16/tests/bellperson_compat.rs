//! kiln against bellperson 0.27: parameters, proofs and verifiers interoperate both ways,
//! for every built-in circuit at two sizes.

use bellperson::groth16 as bp;
use blstrs::{Bls12, Scalar};
use ff::Field;
use kiln_groth16::circuits::{Builtin, Kind};
use kiln_groth16::{
    Check, CpuProver, NoProgress, Parameters, PreparedVerifyingKey, Proof, ProveOptions, create_proofs,
    create_proofs_with, random_setup, verify_proof, verify_proofs_batch,
};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;

fn tmp(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("kiln-compat-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn cross_check(kind: Kind, constraints: usize) {
    let ctx = format!("{kind} at {constraints} constraints");
    // Fresh seeds each run; printed so a failure can be replayed.
    let seed = rand::thread_rng().next_u64();
    println!("{ctx}: seed {seed}");
    let circuit = Builtin::new(kind, constraints, seed);
    let inputs = circuit.public_inputs();

    // Same seeded RNG → byte-identical parameters from both setups.
    let kiln_params = random_setup(circuit, &mut ChaCha20Rng::seed_from_u64(seed), &NoProgress).unwrap();
    let bp_params: bp::Parameters<Bls12> =
        bp::generate_random_parameters(circuit, &mut ChaCha20Rng::seed_from_u64(seed)).unwrap();
    let kiln_bytes = kiln_params.to_bytes();
    let mut bp_bytes = Vec::new();
    bp_params.write(&mut bp_bytes).unwrap();
    assert_eq!(kiln_bytes.len(), bp_bytes.len(), "{ctx}: parameter file sizes differ");
    if let Some(i) = kiln_bytes.iter().zip(&bp_bytes).position(|(a, b)| a != b) {
        panic!("{ctx}: parameter bytes differ first at offset {i}");
    }
    assert_eq!(kiln_bytes.len(), kiln_params.file_size(), "{ctx}: file_size()");

    // Files written by either load in the other.
    let kiln_path = tmp(&format!("{kind}-{constraints}-kiln.params"));
    kiln_params.write_file(&kiln_path).unwrap();
    let from_kiln = bp::Parameters::<Bls12>::read(std::fs::File::open(&kiln_path).unwrap(), true).unwrap();
    assert!(from_kiln == bp_params, "{ctx}: bellperson read of kiln's file differs");
    let bp_path = tmp(&format!("{kind}-{constraints}-bp.params"));
    bp_params.write(std::fs::File::create(&bp_path).unwrap()).unwrap();
    let from_bp = Parameters::read(&bp_path, Check::Full).unwrap();
    assert_eq!(from_bp, kiln_params, "{ctx}: kiln read of bellperson's file differs");
    std::fs::remove_file(&kiln_path).unwrap();
    std::fs::remove_file(&bp_path).unwrap();

    // Same r, s → byte-identical proofs.
    let mut rng = ChaCha20Rng::seed_from_u64(seed ^ 1);
    let (r, s) = (Scalar::random(&mut rng), Scalar::random(&mut rng));
    let (kiln_proofs, _) =
        create_proofs_with(&CpuProver::new(kiln_params.clone()), vec![circuit], &[(r, s)], ProveOptions::default())
            .unwrap();
    let bp_proof = bp::create_proof(circuit, &bp_params, r, s).unwrap();
    let mut bp_proof_bytes = Vec::new();
    bp_proof.write(&mut bp_proof_bytes).unwrap();
    assert_eq!(kiln_proofs[0].to_bytes().to_vec(), bp_proof_bytes, "{ctx}: proof bytes differ for the same r, s");

    // kiln's random proof verifies with bellperson's verifier, and a wrong input fails there.
    let (kiln_random, _) = create_proofs(
        &CpuProver::new(kiln_params.clone()),
        vec![circuit],
        &mut rng,
        ProveOptions { check_satisfied: true, ..ProveOptions::default() },
    )
    .unwrap();
    let as_bp = bp::Proof::<Bls12>::read(&kiln_random[0].to_bytes()[..]).unwrap();
    let bp_pvk = bp::prepare_verifying_key(&bp_params.vk);
    assert!(bp::verify_proof(&bp_pvk, &as_bp, &inputs).unwrap(), "{ctx}: bellperson rejects kiln's proof");
    let mut wrong = inputs.clone();
    wrong[0] += Scalar::ONE;
    assert!(!bp::verify_proof(&bp_pvk, &as_bp, &wrong).unwrap(), "{ctx}: bellperson accepts a wrong input");

    // bellperson's random proof verifies with kiln's verifier; a wrong input fails.
    let bp_random = bp::create_random_proof(circuit, &bp_params, &mut rng).unwrap();
    let mut bytes = Vec::new();
    bp_random.write(&mut bytes).unwrap();
    let as_kiln = Proof::from_bytes(&bytes).unwrap();
    let pvk = PreparedVerifyingKey::new(&kiln_params.vk);
    assert!(verify_proof(&pvk, &as_kiln, &inputs).unwrap(), "{ctx}: kiln rejects bellperson's proof");
    assert!(!verify_proof(&pvk, &as_kiln, &wrong).unwrap(), "{ctx}: kiln accepts a wrong input");

    // Batch verification: all good → true; one wrong input → false.
    let proofs = [kiln_random[0], as_kiln, kiln_proofs[0]];
    let mut batch_inputs = vec![inputs.clone(); 3];
    assert!(verify_proofs_batch(&pvk, &proofs, &batch_inputs, &mut rng).unwrap(), "{ctx}: batch rejects good proofs");
    batch_inputs[1] = wrong;
    assert!(!verify_proofs_batch(&pvk, &proofs, &batch_inputs, &mut rng).unwrap(), "{ctx}: batch accepts a bad one");
}

#[test]
fn mimc_matches_bellperson() {
    cross_check(Kind::Mimc, 1 << 8);
    cross_check(Kind::Mimc, 1 << 11);
}

#[test]
fn squaring_matches_bellperson() {
    cross_check(Kind::Squaring, 1 << 8);
    cross_check(Kind::Squaring, 1 << 11);
}

#[test]
fn porep_matches_bellperson() {
    cross_check(Kind::Porep, 1 << 8);
    cross_check(Kind::Porep, 1 << 11);
}

#[test]
fn batch_of_circuits_matches_bellperson_batch() {
    let seed = rand::thread_rng().next_u64();
    let circuits: Vec<Builtin> = (0..3).map(|i| Builtin::new(Kind::Porep, 300, seed + i)).collect();
    let params = random_setup(circuits[0], &mut ChaCha20Rng::seed_from_u64(seed), &NoProgress).unwrap();
    let mut bytes = Vec::new();
    params.write(&mut bytes).unwrap();
    let bp_params = bp::Parameters::<Bls12>::read(&bytes[..], true).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let r: Vec<Scalar> = (0..3).map(|_| Scalar::random(&mut rng)).collect();
    let s: Vec<Scalar> = (0..3).map(|_| Scalar::random(&mut rng)).collect();
    let r_s: Vec<_> = r.iter().copied().zip(s.iter().copied()).collect();
    let (ours, _) =
        create_proofs_with(&CpuProver::new(params.clone()), circuits.clone(), &r_s, ProveOptions::default()).unwrap();
    let theirs = bp::create_proof_batch(circuits.clone(), &bp_params, r, s).unwrap();
    for (i, (a, b)) in ours.iter().zip(&theirs).enumerate() {
        let mut bb = Vec::new();
        b.write(&mut bb).unwrap();
        assert_eq!(a.to_bytes().to_vec(), bb, "seed {seed}: batch proof {i} differs");
    }
}
