//! Bad inputs: each gives a typed error that names what is wrong, and no output.

use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::{Fp, G1Affine, G2Affine, Scalar};
use ff::Field;
use group::prime::PrimeCurveAffine;
use kiln_groth16::circuits::{Builtin, Kind};
use kiln_groth16::{
    Check, CpuProver, Groth16Error, NoProgress, PROOF_BYTES, Parameters, ParamsError, PointFault, PreparedVerifyingKey,
    Proof, ProofError, ProofReader, ProveOptions, VerifyError, VerifyingKey, create_proofs, random_setup, verify_proof,
};
use proptest::prelude::*;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

const G1: usize = 96;
const G2: usize = 192;

fn small() -> (Builtin, Parameters) {
    let c = Builtin::new(Kind::Mimc, 64, 5);
    let p = random_setup(c, &mut ChaCha20Rng::seed_from_u64(9), &NoProgress).unwrap();
    (c, p)
}

/// Byte offsets of each section's length field.
struct Layout {
    h: usize,
    l: usize,
    a: usize,
    b_g1: usize,
    b_g2: usize,
}

fn layout(p: &Parameters) -> Layout {
    let h = 3 * G1 + 3 * G2 + 4 + G1 * p.vk.ic.len();
    let l = h + 4 + G1 * p.h.len();
    let a = l + 4 + G1 * p.l.len();
    let b_g1 = a + 4 + G1 * p.a.len();
    let b_g2 = b_g1 + 4 + G1 * p.b_g1.len();
    Layout { h, l, a, b_g1, b_g2 }
}

/// A point on the G1 curve outside the prime-order subgroup.
fn g1_outside_subgroup() -> [u8; 96] {
    for x in 1u64.. {
        let x = Fp::from(x);
        let rhs = x.square() * x + Fp::from(4u64);
        if let Some(y) = Option::<Fp>::from(rhs.sqrt()) {
            let p = G1Affine::from_raw_unchecked(x, y, false);
            if bool::from(p.is_on_curve()) && !bool::from(p.is_torsion_free()) {
                return p.to_uncompressed();
            }
        }
    }
    unreachable!()
}

fn expect_bad_point(bytes: &[u8], check: Check, section: &str, index: usize, offset: usize, fault: PointFault) {
    match Parameters::from_bytes(bytes, check) {
        Err(ParamsError::BadPoint { section: s, index: i, offset: o, fault: f }) => {
            assert_eq!((s, i, o, f), (section, index, offset, fault), "wrong error details");
        }
        other => panic!("expected BadPoint in {section}[{index}] at {offset} ({fault}), got {other:?}"),
    }
}

#[test]
fn truncated_files_are_rejected_with_the_section() {
    let (_, p) = small();
    let bytes = p.to_bytes();
    let lay = layout(&p);
    for cut in [0, 10, 500, lay.h + 2, lay.h + 4 + 50, lay.b_g2 + 4 + 7, bytes.len() - 1] {
        let err = Parameters::from_bytes(&bytes[..cut], Check::Full).unwrap_err();
        assert!(
            matches!(err, ParamsError::Truncated { .. } | ParamsError::SectionLength { .. }),
            "cut at {cut}: {err:?}"
        );
    }
    // Through a file as well.
    let path = std::env::temp_dir().join(format!("kiln-trunc-{}.params", std::process::id()));
    std::fs::write(&path, &bytes[..lay.l + 4 + 10]).unwrap();
    match Parameters::read(&path, Check::Full).unwrap_err() {
        ParamsError::SectionLength { section: "l", offset, .. } => assert_eq!(offset, lay.l),
        e => panic!("expected SectionLength in l, got {e:?}"),
    }
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn wrong_section_length_is_rejected() {
    let (_, p) = small();
    let lay = layout(&p);
    let mut bytes = p.to_bytes();
    bytes[lay.h..lay.h + 4].copy_from_slice(&u32::MAX.to_be_bytes());
    match Parameters::from_bytes(&bytes, Check::Full).unwrap_err() {
        ParamsError::SectionLength { section: "h", offset, count, .. } => {
            assert_eq!((offset, count), (lay.h, u32::MAX as u64))
        }
        e => panic!("expected SectionLength in h, got {e:?}"),
    }
    // One point too few in a: the rest shifts and the file no longer parses.
    let mut bytes = p.to_bytes();
    bytes[lay.a..lay.a + 4].copy_from_slice(&(p.a.len() as u32 - 1).to_be_bytes());
    assert!(Parameters::from_bytes(&bytes, Check::Full).is_err());
    // Extra bytes after the last section.
    let mut bytes = p.to_bytes();
    let end = bytes.len();
    bytes.extend_from_slice(&[0; 5]);
    match Parameters::from_bytes(&bytes, Check::Full).unwrap_err() {
        ParamsError::TrailingBytes { offset, count } => assert_eq!((offset, count), (end, 5)),
        e => panic!("expected TrailingBytes, got {e:?}"),
    }
}

#[test]
fn point_off_the_curve_is_rejected_with_its_offset() {
    let (_, p) = small();
    let lay = layout(&p);
    let mut bytes = p.to_bytes();
    let off = lay.l + 4 + 3 * G1;
    bytes[off + G1 - 1] ^= 1; // last byte of y
    expect_bad_point(&bytes, Check::Full, "l", 3, off, PointFault::NotOnCurve);
    expect_bad_point(&bytes, Check::NoSubgroup, "l", 3, off, PointFault::NotOnCurve);

    let mut bytes = p.to_bytes();
    let off = lay.b_g2 + 4 + G2;
    bytes[off + G2 - 1] ^= 1;
    expect_bad_point(&bytes, Check::Full, "b_g2", 1, off, PointFault::NotOnCurve);
}

#[test]
fn point_outside_the_subgroup_is_rejected_in_checked_mode() {
    let (_, p) = small();
    let lay = layout(&p);
    let mut bytes = p.to_bytes();
    let off = lay.a + 4 + 2 * G1;
    bytes[off..off + G1].copy_from_slice(&g1_outside_subgroup());
    expect_bad_point(&bytes, Check::Full, "a", 2, off, PointFault::NotInSubgroup);
    // The fast mode skips the subgroup check by design (documented on Check::NoSubgroup).
    assert!(Parameters::from_bytes(&bytes, Check::NoSubgroup).is_ok());
}

#[test]
fn infinity_is_rejected_everywhere() {
    let (_, p) = small();
    let lay = layout(&p);
    let inf1 = G1Affine::identity().to_uncompressed();
    for (section, start) in [("h", lay.h), ("l", lay.l), ("a", lay.a), ("b_g1", lay.b_g1)] {
        let mut bytes = p.to_bytes();
        let off = start + 4;
        bytes[off..off + G1].copy_from_slice(&inf1);
        expect_bad_point(&bytes, Check::NoSubgroup, section, 0, off, PointFault::Infinity);
    }
    let mut bytes = p.to_bytes();
    let off = lay.b_g2 + 4;
    bytes[off..off + G2].copy_from_slice(&G2Affine::identity().to_uncompressed());
    expect_bad_point(&bytes, Check::Full, "b_g2", 0, off, PointFault::Infinity);
    let mut bytes = p.to_bytes();
    bytes[..G1].copy_from_slice(&inf1);
    expect_bad_point(&bytes, Check::Full, "vk.alpha_g1", 0, 0, PointFault::Infinity);
}

#[test]
fn circuit_larger_than_the_parameters_is_rejected() {
    let (_, p) = small();
    let big = Builtin::new(Kind::Mimc, 256, 5);
    let err = create_proofs(&CpuProver::new(p.clone()), vec![big], &mut rand::thread_rng(), ProveOptions::default())
        .unwrap_err();
    assert!(matches!(err, Groth16Error::ParamsMismatch { .. }), "{err:?}");
    // Same size, other circuit: also a mismatch.
    let other = Builtin::new(Kind::Porep, 64, 5);
    let err = create_proofs(&CpuProver::new(p.clone()), vec![other], &mut rand::thread_rng(), ProveOptions::default())
        .unwrap_err();
    assert!(matches!(err, Groth16Error::ParamsMismatch { .. }), "{err:?}");
}

#[test]
fn wrong_number_of_public_inputs_is_an_error() {
    let (c, p) = small();
    let (proofs, _) =
        create_proofs(&CpuProver::new(p.clone()), vec![c], &mut rand::thread_rng(), ProveOptions::default()).unwrap();
    let pvk = PreparedVerifyingKey::new(&p.vk);
    assert_eq!(verify_proof(&pvk, &proofs[0], &[]), Err(VerifyError::InputCount { expected: 1, got: 0 }));
    let two = [Scalar::ONE, Scalar::ONE];
    assert_eq!(verify_proof(&pvk, &proofs[0], &two), Err(VerifyError::InputCount { expected: 1, got: 2 }));
    assert_eq!(verify_proof(&pvk, &proofs[0], &c.public_inputs()), Ok(true));
}

/// x · y = z with a wrong z: synthesizes fine, but is not satisfied.
#[derive(Clone, Copy)]
struct Unsatisfied;

impl Circuit<Scalar> for Unsatisfied {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let x = cs.alloc(|| "x", || Ok(Scalar::from(3u64)))?;
        let y = cs.alloc(|| "y", || Ok(Scalar::from(5u64)))?;
        let z = cs.alloc_input(|| "z", || Ok(Scalar::from(16u64)))?;
        cs.enforce(|| "xy = z", |lc| lc + x, |lc| lc + y, |lc| lc + z);
        cs.enforce(|| "y used", |lc| lc + y, |lc| lc + CS::one(), |lc| lc + y);
        Ok(())
    }
}

#[test]
fn unsatisfied_circuit_is_caught_when_asked_and_never_verifies() {
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let p = random_setup(Unsatisfied, &mut rng, &NoProgress).unwrap();
    let err = create_proofs(
        &CpuProver::new(p.clone()),
        vec![Unsatisfied],
        &mut rng,
        ProveOptions { check_satisfied: true, ..ProveOptions::default() },
    )
    .unwrap_err();
    assert!(matches!(err, Groth16Error::Unsatisfied { circuit: 0, constraint: 0 }), "{err:?}");
    // Without the check, the proof is made, fails the verification every proof gets before it
    // is returned, and is not handed out (issue 15 item 2: kiln never returns a bad proof).
    let err =
        create_proofs(&CpuProver::new(p.clone()), vec![Unsatisfied], &mut rng, ProveOptions::default()).unwrap_err();
    assert!(matches!(&err, Groth16Error::ProofRejected { circuit: 0, prover } if prover == "cpu"), "{err:?}");
    // Only with verification turned off (benchmarks) does the bad proof come out.
    let options = ProveOptions { verify: false, ..ProveOptions::default() };
    let (proofs, _) = create_proofs(&CpuProver::new(p.clone()), vec![Unsatisfied], &mut rng, options).unwrap();
    let pvk = PreparedVerifyingKey::new(&p.vk);
    assert_eq!(verify_proof(&pvk, &proofs[0], &[Scalar::from(16u64)]), Ok(false));
}

#[test]
fn bad_proof_bytes_are_rejected() {
    let (c, p) = small();
    let (proofs, _) =
        create_proofs(&CpuProver::new(p.clone()), vec![c], &mut rand::thread_rng(), ProveOptions::default()).unwrap();
    let good = proofs[0].to_bytes();
    assert!(matches!(Proof::from_bytes(&good[..191]), Err(ProofError::Length { expected: 192, got: 191 })));
    let mut bad = good;
    bad[48..144].copy_from_slice(&G2Affine::identity().to_compressed());
    assert!(matches!(
        Proof::from_bytes(&bad),
        Err(ProofError::BadPoint { proof: 0, element: "b", fault: PointFault::Infinity })
    ));
    let mut bad = good;
    bad[144] ^= 0x20; // flips the sign flag of C: a valid encoding of −C, so still decodes
    let flipped = Proof::from_bytes(&bad).unwrap();
    let pvk = PreparedVerifyingKey::new(&p.vk);
    assert_eq!(verify_proof(&pvk, &flipped, &c.public_inputs()), Ok(false));
    let mut bad = good;
    bad[0] &= 0x7f; // clears the compression flag: invalid encoding, named as such
    assert!(matches!(
        Proof::from_bytes(&bad),
        Err(ProofError::BadPoint { proof: 0, element: "a", fault: PointFault::NotCompressed })
    ));
}

/// (offset, size) of every point in the encoding of `p`, in file order.
fn point_offsets(p: &Parameters) -> Vec<(usize, usize)> {
    let mut v = vec![(0, G1), (G1, G1), (2 * G1, G2), (2 * G1 + G2, G2), (2 * G1 + 2 * G2, G1), (3 * G1 + 2 * G2, G2)];
    let mut at = 3 * G1 + 3 * G2;
    let sections = [
        (p.vk.ic.len(), G1),
        (p.h.len(), G1),
        (p.l.len(), G1),
        (p.a.len(), G1),
        (p.b_g1.len(), G1),
        (p.b_g2.len(), G2),
    ];
    for (len, size) in sections {
        at += 4;
        for i in 0..len {
            v.push((at + i * size, size));
        }
        at += len * size;
    }
    assert_eq!(at, p.file_size());
    v
}

/// Issue 15, item 1: bit 0x80 on an uncompressed point made blst read its first half as a
/// compressed point (y ignored, the sort bit picking the sign), and `kiln prove` wrote a proof
/// that did not verify. Bit 0x20 was dropped silently. Both are malformed in every mode.
#[test]
fn flagged_uncompressed_points_are_rejected_in_every_mode() {
    let (_, p) = small();
    let lay = layout(&p);
    let cases = [
        ("vk.alpha_g1", 0, 0, G1),
        ("vk.beta_g2", 0, 2 * G1, G2),
        ("vk.ic", 1, 3 * G1 + 3 * G2 + 4 + G1, G1),
        ("h", 1, lay.h + 4 + G1, G1),
        ("b_g2", 0, lay.b_g2 + 4, G2),
    ];
    for (section, index, off, size) in cases {
        for (flag, fault) in
            [(0x80, PointFault::CompressionFlag), (0xa0, PointFault::CompressionFlag), (0x20, PointFault::SortFlag)]
        {
            let mut bytes = p.to_bytes();
            bytes[off] |= flag;
            if flag & 0x80 != 0 && size == G1 {
                // The hazard itself: blst decodes the flagged bytes as some point, so only the
                // reader's own flag check stands between them and a wrong proof.
                let raw: [u8; 96] = bytes[off..off + G1].try_into().unwrap();
                assert!(
                    bool::from(G1Affine::from_uncompressed_unchecked(&raw).is_some()),
                    "{section}: blst refuses it"
                );
            }
            for check in [Check::Full, Check::NoSubgroup] {
                expect_bad_point(&bytes, check, section, index, off, fault);
            }
            if section.starts_with("vk.") {
                let vk_len = 3 * G1 + 3 * G2 + 4 + G1 * p.vk.ic.len();
                match VerifyingKey::from_bytes(&bytes[..vk_len]) {
                    Err(ParamsError::BadPoint { section: s, fault: f, .. }) => assert_eq!((s, f), (section, fault)),
                    other => panic!("verifying key with a flagged {section}: {other:?}"),
                }
            }
        }
    }
}

/// The reader and the writer agree on flag-free files: the unmodified file round-trips.
#[test]
fn valid_parameters_reencode_to_their_bytes() {
    let (_, p) = small();
    let bytes = p.to_bytes();
    for check in [Check::Full, Check::NoSubgroup] {
        assert!(Parameters::from_bytes(&bytes, check).unwrap().to_bytes() == bytes);
    }
}

/// Issue 15, item 6: a directory as the parameter file said "No such device" (the mapping
/// failed), `/dev/zero` said "truncated … regenerate or re-download it".
#[test]
fn parameter_paths_that_are_not_files_are_named() {
    let dir = std::env::temp_dir();
    match Parameters::read(&dir, Check::Full) {
        Err(ParamsError::NotRegular { what: "a directory", path }) => assert_eq!(path, dir),
        other => panic!("directory as parameters: {other:?}"),
    }
    #[cfg(unix)]
    match Parameters::read(std::path::Path::new("/dev/zero"), Check::Full) {
        Err(e @ ParamsError::NotRegular { what: "a character device", .. }) => {
            assert!(e.to_string().contains("/dev/zero"), "{e}")
        }
        other => panic!("/dev/zero as parameters: {other:?}"),
    }
    let missing = dir.join(format!("kiln-missing-{}.params", std::process::id()));
    match Parameters::read(&missing, Check::Full) {
        Err(e @ ParamsError::Io { op: "stat", .. }) => {
            assert!(e.to_string().contains(&*missing.to_string_lossy()), "{e}")
        }
        other => panic!("missing parameters: {other:?}"),
    }
}

/// Issue 15, item 6: a FIFO with no writer as the parameter file blocked forever in `open`.
/// The read runs on a thread: should it block, the test opens the FIFO's other end itself to
/// free it and fails, rather than hanging the suite.
#[cfg(unix)]
#[test]
fn a_fifo_as_parameters_is_refused_without_blocking() {
    let dir = std::env::temp_dir().join(format!("kiln-fifo-params-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("params.fifo");
    let status = std::process::Command::new("mkfifo").arg(&fifo).status().expect("mkfifo runs");
    assert!(status.success());
    let (tx, rx) = std::sync::mpsc::channel();
    let path = fifo.clone();
    std::thread::spawn(move || {
        let _ = tx.send(Parameters::read(&path, Check::Full).map(|_| ()));
    });
    let result = match rx.recv_timeout(std::time::Duration::from_secs(60)) {
        Ok(r) => r,
        Err(_) => {
            let _ = std::fs::OpenOptions::new().write(true).open(&fifo);
            panic!("Parameters::read blocked on a FIFO without a writer");
        }
    };
    assert!(matches!(result, Err(ParamsError::NotRegular { what: "a FIFO or pipe", .. })), "{result:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Counts the bytes taken from a reader.
struct Counting<R> {
    inner: R,
    taken: usize,
}

impl<R: std::io::Read> std::io::Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.taken += n;
        Ok(n)
    }
}

/// Issue 15, item 5: `verify --proof /dev/zero` grew to 1 GB. The stream reader takes at most
/// the proofs asked for plus one byte, and says when there is more.
#[test]
fn proof_streams_are_read_only_as_far_as_the_expected_proofs() {
    let (c, p) = small();
    let (proofs, _) =
        create_proofs(&CpuProver::new(p.clone()), vec![c, c], &mut rand::thread_rng(), ProveOptions::default())
            .unwrap();
    let bytes: Vec<u8> = proofs.iter().flat_map(|p| p.to_bytes()).collect();
    // Exactly two: read, in chunks of one.
    let mut r = ProofReader::new(&bytes[..], 2);
    assert_eq!(r.next_chunk(1).unwrap(), vec![proofs[0]]);
    assert_eq!(r.next_chunk(1).unwrap(), vec![proofs[1]]);
    assert!(r.next_chunk(1).unwrap().is_empty());
    // An endless stream after one proof: an error after 193 bytes.
    let mut endless = Counting { inner: std::io::Read::chain(&bytes[..PROOF_BYTES], std::io::repeat(7)), taken: 0 };
    match Proof::read_from(&mut endless, 1) {
        Err(ProofError::TooLong { count: 1, expected: 192 }) => {}
        other => panic!("endless stream: {other:?}"),
    }
    assert_eq!(endless.taken, PROOF_BYTES + 1);
    // Two proofs where one is expected; one where two are.
    assert!(matches!(Proof::read_from(&bytes[..], 1), Err(ProofError::TooLong { count: 1, .. })));
    assert!(matches!(Proof::read_from(&bytes[..PROOF_BYTES], 2), Err(ProofError::Length { expected: 384, got: 192 })));
    // A bad point in the second proof is numbered as such.
    let mut bad = bytes.clone();
    bad[PROOF_BYTES + 144] &= 0x7f;
    assert!(matches!(
        Proof::read_from(&bad[..], 2),
        Err(ProofError::BadPoint { proof: 1, element: "c", fault: PointFault::NotCompressed })
    ));
    // Zero proofs: the stream must be empty.
    assert!(Proof::read_from(&[][..], 0).unwrap().is_empty());
    assert!(matches!(Proof::read_from(&bytes[..], 0), Err(ProofError::TooLong { count: 0, .. })));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let _ = Parameters::from_bytes(&bytes, Check::Full);
        let _ = Proof::from_bytes(&bytes);
        let _ = kiln_groth16::VerifyingKey::from_bytes(&bytes);
    }

    #[test]
    fn mutated_parameters_never_panic(pos in any::<prop::sample::Index>(), val in any::<u8>(), cut in any::<prop::sample::Index>()) {
        let (_, p) = small_cached();
        let mut bytes = p.to_bytes();
        let i = pos.index(bytes.len());
        bytes[i] = val;
        let _ = Parameters::from_bytes(&bytes, Check::Full);
        let cut = cut.index(bytes.len());
        let _ = Parameters::from_bytes(&bytes[..cut], Check::NoSubgroup);
    }

    /// Issue 15, item 9 (the fuzz targets' property, here in the normal suite): every file the
    /// reader accepts re-encodes to exactly its bytes. The mutations aim at what a lax decoder
    /// lets through: flag bits on a point's first byte, and any byte anywhere.
    #[test]
    fn accepted_parameters_reencode_to_their_bytes(
        point in any::<prop::sample::Index>(),
        flags in any::<u8>(),
        pos in any::<prop::sample::Index>(),
        val in any::<u8>(),
        full in any::<bool>(),
    ) {
        let (_, p) = small_cached();
        let check = if full { Check::Full } else { Check::NoSubgroup };
        let mut bytes = p.to_bytes();
        let (off, _) = point_offsets(p)[point.index(point_offsets(p).len())];
        bytes[off] |= flags & 0xe0;
        if let Ok(q) = Parameters::from_bytes(&bytes, check) {
            prop_assert!(q.to_bytes() == bytes, "flags {:#x} at {off} accepted but not re-encoded", flags & 0xe0);
        }
        let mut bytes = p.to_bytes();
        let i = pos.index(bytes.len());
        bytes[i] = val;
        if let Ok(q) = Parameters::from_bytes(&bytes, check) {
            prop_assert!(q.to_bytes() == bytes, "byte {i} = {val:#x} accepted but not re-encoded");
        }
    }

    /// The same property for proofs.
    #[test]
    fn accepted_proofs_reencode_to_their_bytes(pos in 0..PROOF_BYTES, val in any::<u8>()) {
        let mut bytes = small_proof_cached().to_bytes();
        bytes[pos] = val;
        if let Ok(q) = Proof::from_bytes(&bytes) {
            prop_assert!(q.to_bytes() == bytes, "byte {pos} = {val:#x} accepted but not re-encoded");
        }
    }
}

fn small_proof_cached() -> &'static Proof {
    static CELL: std::sync::OnceLock<Proof> = std::sync::OnceLock::new();
    CELL.get_or_init(|| {
        let (c, p) = small_cached();
        let (proofs, _) = create_proofs(
            &CpuProver::new(p.clone()),
            vec![*c],
            &mut ChaCha20Rng::seed_from_u64(3),
            ProveOptions::default(),
        )
        .unwrap();
        proofs[0]
    })
}

fn small_cached() -> &'static (Builtin, Parameters) {
    static CELL: std::sync::OnceLock<(Builtin, Parameters)> = std::sync::OnceLock::new();
    CELL.get_or_init(small)
}
