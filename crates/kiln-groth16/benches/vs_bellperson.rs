//! kiln's CPU prover against bellperson's on the same circuit and parameters, side by side
//! in one run. `cargo bench -p kiln-groth16 --bench vs_bellperson`
//!
//! Environment: `KILN_BENCH_LOGS` (default `16,18`), `KILN_BENCH_CIRCUITS` (default
//! `squaring,porep`), `KILN_BENCH_REPEAT` (default 3). Proofs alternate kiln/bellperson so
//! that machine noise hits both alike; the median of each is reported.

mod common;

use std::time::Instant;

use bellperson::groth16 as bp;
use blstrs::Bls12;
use common::median;
use kiln_groth16::circuits::Builtin;
use kiln_groth16::{
    CpuProver, NoProgress, PreparedVerifyingKey, ProveOptions, create_proofs, random_setup, verify_proof,
};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

fn main() {
    let common::Config { logs, kinds, repeat } = common::config("16,18", "squaring,porep", 3);
    let threads = rayon::current_num_threads();
    println!("kiln vs bellperson 0.27 CPU provers, {threads} threads, median of {repeat} proofs each");
    println!(
        "{:<10} {:>6} {:>12} {:>14} {:>14} {:>16}",
        "circuit", "log2", "setup s", "kiln ms", "bellperson ms", "bellperson/kiln"
    );
    for kind in kinds {
        for &log in &logs {
            let circuit = Builtin::new(kind, 1 << log, 11);
            let mut rng = ChaCha20Rng::seed_from_u64(log as u64);
            let start = Instant::now();
            let params = random_setup(circuit, &mut rng, &NoProgress).expect("setup");
            let setup = start.elapsed();
            let bytes = params.to_bytes();
            let bp_params = bp::Parameters::<Bls12>::read(&bytes[..], false).expect("bellperson reads kiln's params");
            let pvk = PreparedVerifyingKey::new(&params.vk);
            let inputs = circuit.public_inputs();
            let (mut ours, mut theirs) = (Vec::new(), Vec::new());
            for _ in 0..repeat {
                let start = Instant::now();
                let (p, _) =
                    create_proofs(&CpuProver::new(params.clone()), vec![circuit], &mut rng, ProveOptions::default())
                        .expect("kiln proves");
                ours.push(start.elapsed());
                assert!(verify_proof(&pvk, &p[0], &inputs).unwrap(), "kiln proof does not verify");

                let start = Instant::now();
                let q = bp::create_random_proof(circuit, &bp_params, &mut rng).expect("bellperson proves");
                theirs.push(start.elapsed());
                let mut qb = Vec::new();
                q.write(&mut qb).unwrap();
                let q = kiln_groth16::Proof::from_bytes(&qb).unwrap();
                assert!(verify_proof(&pvk, &q, &inputs).unwrap(), "bellperson proof does not verify");
            }
            let (k, b) = (median(ours), median(theirs));
            println!(
                "{:<10} {:>6} {:>12.1} {:>14.1} {:>14.1} {:>16.2}",
                kind.name(),
                log,
                setup.as_secs_f64(),
                k.as_secs_f64() * 1e3,
                b.as_secs_f64() * 1e3,
                b.as_secs_f64() / k.as_secs_f64()
            );
        }
    }
}
