//! GPU tests: every field and curve operation of the kernels against blstrs, on fresh random
//! inputs each run (4096 per op, fewer under KILN_TEST_SMALL=1) and on edge values.
//! Run on a GPU machine: `cargo xtask gpu-bundle` (they are #[ignore] here).

use ff::{Field, PrimeField};
use group::Group;
use kiln_cuda::testing::{gpu_or_skip, small_sizes};
use kiln_field::gpu::{self, CurveOp, FieldOp};
use kiln_field::{DeviceLayout, Fp, Fp2, G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use rand::rngs::ThreadRng;

fn n_random() -> usize {
    if small_sizes() { 64 } else { 4096 }
}

/// A value built from device-layout words (raw, not converted).
fn raw<T: DeviceLayout>(words: &[u64]) -> T {
    T::from_u64s(words).expect("whole value")[0]
}

fn words<T: DeviceLayout>(x: &T) -> Vec<u64> {
    T::as_u64s(std::slice::from_ref(x)).to_vec()
}

/// The flag the eq / is_zero kernels write: 1 or 0 in the lowest word, then zeros.
fn flag<T: DeviceLayout>(b: bool) -> T {
    let mut w = vec![0u64; T::WORDS];
    w[0] = u64::from(b);
    raw(&w)
}

/// A field as the tests see it: blstrs arithmetic plus plain-integer conversions.
trait TestField: DeviceLayout + Field + std::fmt::Debug {
    const NAME: &'static str;
    fn gpu(device: &kiln_cuda::Device, op: FieldOp, a: &[Self], b: &[Self]) -> kiln_cuda::Result<Vec<Self>>;
    /// The plain (non-Montgomery) integer of x, as device words.
    fn canonical_words(x: &Self) -> Vec<u64>;
    /// The exponent the pow kernel reads from b (its lowest 32-bit limb).
    fn pow_exp(b: &Self) -> u64 {
        words(b)[0] & 0xffff_ffff
    }
    fn edges() -> Vec<Self>;
    fn from_u64(x: u64) -> Self;
    /// The value whose plain integer(s) are these device words (Fp2: per component).
    fn from_plain_words(w: &[u64]) -> Self {
        from_canonical_words(w)
    }
}

fn le_words(bytes: &[u8]) -> Vec<u64> {
    bytes.chunks(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect()
}

/// R as a field value: 2^bits.
fn two_pow<F: Field>(bits: u64) -> F {
    F::ONE.double().pow_vartime([bits])
}

impl TestField for Scalar {
    const NAME: &'static str = "Fr";
    fn gpu(device: &kiln_cuda::Device, op: FieldOp, a: &[Self], b: &[Self]) -> kiln_cuda::Result<Vec<Self>> {
        gpu::fr_op(device, op, a, b)
    }
    fn canonical_words(x: &Self) -> Vec<u64> {
        le_words(&x.to_repr())
    }
    fn from_u64(x: u64) -> Self {
        Scalar::from(x)
    }
    fn edges() -> Vec<Self> {
        vec![
            Scalar::ZERO,
            Scalar::ONE,
            -Scalar::ONE, // r - 1
            two_pow(256), // R
            Scalar::from(2u64),
            Scalar::ROOT_OF_UNITY,
            Scalar::TWO_INV, // (r + 1) / 2
            -Scalar::TWO_INV,
        ]
    }
}

impl TestField for Fp {
    const NAME: &'static str = "Fp";
    fn gpu(device: &kiln_cuda::Device, op: FieldOp, a: &[Self], b: &[Self]) -> kiln_cuda::Result<Vec<Self>> {
        gpu::fp_op(device, op, a, b)
    }
    fn canonical_words(x: &Self) -> Vec<u64> {
        le_words(&x.to_bytes_le())
    }
    fn from_u64(x: u64) -> Self {
        Fp::from(x)
    }
    fn edges() -> Vec<Self> {
        let r_minus_1 = {
            let mut b = [0u8; 48];
            b[..32].copy_from_slice(&(-Scalar::ONE).to_repr());
            Fp::from_bytes_le(&b).unwrap()
        };
        vec![Fp::ZERO, Fp::ONE, -Fp::ONE, two_pow(384), r_minus_1, Fp::from(2u64), Fp::from(4u64), -Fp::from(2u64)]
    }
}

impl TestField for Fp2 {
    const NAME: &'static str = "Fp2";
    fn gpu(device: &kiln_cuda::Device, op: FieldOp, a: &[Self], b: &[Self]) -> kiln_cuda::Result<Vec<Self>> {
        gpu::fp2_op(device, op, a, b)
    }
    fn canonical_words(x: &Self) -> Vec<u64> {
        let mut w = Fp::canonical_words(&x.c0());
        w.extend(Fp::canonical_words(&x.c1()));
        w
    }
    fn from_u64(x: u64) -> Self {
        Fp2::new(Fp::from(x), Fp::ZERO)
    }
    fn from_plain_words(w: &[u64]) -> Self {
        Fp2::new(from_canonical_words(&w[..6]), from_canonical_words(&w[6..]))
    }
    fn edges() -> Vec<Self> {
        let e = Fp::edges();
        let mut v = vec![Fp2::ZERO, Fp2::ONE, -Fp2::ONE, Fp2::new(Fp::ZERO, Fp::ONE), Fp2::new(Fp::ZERO, -Fp::ONE)];
        v.push(Fp2::new(e[2], e[2]));
        v.push(Fp2::new(e[3], e[4]));
        v.push(Fp2::new(Fp::ONE, Fp::ONE));
        v
    }
}

/// Expected result of `op` by blstrs.
fn expected<F: TestField>(op: FieldOp, a: &F, b: &F) -> F {
    match op {
        FieldOp::Add => *a + b,
        FieldOp::Sub => *a - b,
        FieldOp::Neg => -*a,
        FieldOp::Dbl => a.double(),
        FieldOp::Mul => *a * b,
        FieldOp::Sqr => a.square(),
        FieldOp::Inv => a.invert().unwrap_or(F::ZERO),
        // a's device words taken as a plain integer x (< m since a is reduced): x in Montgomery form.
        FieldOp::ToMont => F::from_plain_words(&words(a)),
        // a's plain integer, as device words.
        FieldOp::FromMont => raw(&F::canonical_words(a)),
        FieldOp::Pow => a.pow_vartime([F::pow_exp(b)]),
        FieldOp::Eq => flag(a == b),
        FieldOp::IsZero => flag(bool::from(a.is_zero())),
    }
}

/// The field element whose plain integer has these words (via x = sum w_i 2^(64 i)).
fn from_canonical_words<F: TestField>(w: &[u64]) -> F {
    let base = two_pow::<F>(64);
    w.iter().rev().fold(F::ZERO, |acc, &wi| acc * base + F::from_u64(wi))
}

fn inputs<F: TestField>(rng: &mut ThreadRng) -> (Vec<F>, Vec<F>) {
    let edges = F::edges();
    let mut a = Vec::new();
    let mut b = Vec::new();
    for x in &edges {
        for y in &edges {
            a.push(*x);
            b.push(*y);
        }
    }
    for _ in 0..n_random() {
        a.push(F::random(&mut *rng));
        b.push(F::random(&mut *rng));
    }
    // a == b and a == -b pairs on random values
    for _ in 0..16 {
        let x = F::random(&mut *rng);
        a.push(x);
        b.push(x);
        a.push(x);
        b.push(-x);
    }
    (a, b)
}

fn check_field<F: TestField>(device: &kiln_cuda::Device) {
    let mut rng = rand::thread_rng();
    let (a, b) = inputs::<F>(&mut rng);
    for op in FieldOp::ALL {
        let got = F::gpu(device, op, &a, &b).unwrap_or_else(|e| panic!("{} {op:?}: {e}", F::NAME));
        assert_eq!(got.len(), a.len());
        let mut bad = 0;
        for i in 0..a.len() {
            let want = expected(op, &a[i], &b[i]);
            if words(&got[i]) != words(&want) {
                bad += 1;
                if bad <= 5 {
                    eprintln!(
                        "{} {op:?} [{i}]: a = {:?}, b = {:?}\n  gpu  words {:x?}\n  want words {:x?}",
                        F::NAME,
                        a[i],
                        b[i],
                        words(&got[i]),
                        words(&want)
                    );
                }
            }
        }
        assert_eq!(bad, 0, "{} {op:?}: {bad} of {} results differ from blstrs (first ones above)", F::NAME, a.len());
    }
}

#[test]
#[ignore = "needs a CUDA GPU: cargo xtask gpu-bundle"]
fn fr_ops_match_blstrs() {
    let Some(device) = gpu_or_skip("fr_ops_match_blstrs") else { return };
    check_field::<Scalar>(&device);
}

#[test]
#[ignore = "needs a CUDA GPU: cargo xtask gpu-bundle"]
fn fp_ops_match_blstrs() {
    let Some(device) = gpu_or_skip("fp_ops_match_blstrs") else { return };
    check_field::<Fp>(&device);
}

#[test]
#[ignore = "needs a CUDA GPU: cargo xtask gpu-bundle"]
fn fp2_ops_match_blstrs() {
    let Some(device) = gpu_or_skip("fp2_ops_match_blstrs") else { return };
    check_field::<Fp2>(&device);
}

#[test]
#[ignore = "needs a CUDA GPU: cargo xtask gpu-bundle"]
fn device_constants_match_blstrs() {
    let Some(device) = gpu_or_skip("device_constants_match_blstrs") else { return };
    let (fr, fp) = gpu::field_constants(&device).unwrap();
    assert_eq!(fr[0], Scalar::ZERO, "fr_zero");
    assert_eq!(fr[1], Scalar::ONE, "fr_one");
    assert_eq!(fr[2], Scalar::ROOT_OF_UNITY, "fr_root_of_unity");
    assert_eq!(fr[3], Scalar::ROOT_OF_UNITY_INV, "fr_root_of_unity_inv");
    assert_eq!(fr[4], Scalar::MULTIPLICATIVE_GENERATOR, "fr_generator");
    assert_eq!(fr[5] * Scalar::from(7u64), Scalar::ONE, "fr_generator_inv");
    assert_eq!(fr[6], Scalar::ONE, "FR_ONE");
    assert_eq!(fr[7], two_pow::<Scalar>(256), "FR_R2 (raw R^2 read as Montgomery = R)");
    assert_eq!(words(&fr[8]), kiln_field::constants::limbs_u64("FR_MODULUS").unwrap(), "FR_MODULUS");
    assert_eq!(fp[0], Fp::ZERO, "fp_zero");
    assert_eq!(fp[1], Fp::ONE, "fp_one");
    assert_eq!(fp[2], Fp::ONE, "FP_ONE");
    assert_eq!(fp[3], two_pow::<Fp>(384), "FP_R2");
    assert_eq!(words(&fp[4]), kiln_field::constants::limbs_u64("FP_MODULUS").unwrap(), "FP_MODULUS");
}

/// A group as the curve tests see it.
trait TestGroup: DeviceLayout + Group + std::fmt::Debug {
    type Affine: DeviceLayout + std::fmt::Debug + PartialEq + Copy + From<Self> + Into<Self>;
    const NAME: &'static str;
    fn gpu(
        device: &kiln_cuda::Device,
        op: CurveOp,
        a: &[Self],
        b: &[Self],
        c: &[Self::Affine],
    ) -> kiln_cuda::Result<Vec<Self>>;
    fn batch(
        device: &kiln_cuda::Device,
        p: &[Self],
        chunk: u32,
        via_xyzz: bool,
    ) -> kiln_cuda::Result<Vec<Self::Affine>>;
    fn neg_affine(a: &Self::Affine) -> Self::Affine;
}

impl TestGroup for G1Projective {
    type Affine = G1Affine;
    const NAME: &'static str = "G1";
    fn gpu(d: &kiln_cuda::Device, op: CurveOp, a: &[Self], b: &[Self], c: &[G1Affine]) -> kiln_cuda::Result<Vec<Self>> {
        gpu::g1_op(d, op, a, b, c)
    }
    fn batch(d: &kiln_cuda::Device, p: &[Self], chunk: u32, via_xyzz: bool) -> kiln_cuda::Result<Vec<G1Affine>> {
        gpu::g1_batch_to_affine(d, p, chunk, via_xyzz)
    }
    fn neg_affine(a: &G1Affine) -> G1Affine {
        -*a
    }
}

impl TestGroup for G2Projective {
    type Affine = G2Affine;
    const NAME: &'static str = "G2";
    fn gpu(d: &kiln_cuda::Device, op: CurveOp, a: &[Self], b: &[Self], c: &[G2Affine]) -> kiln_cuda::Result<Vec<Self>> {
        gpu::g2_op(d, op, a, b, c)
    }
    fn batch(d: &kiln_cuda::Device, p: &[Self], chunk: u32, via_xyzz: bool) -> kiln_cuda::Result<Vec<G2Affine>> {
        gpu::g2_batch_to_affine(d, p, chunk, via_xyzz)
    }
    fn neg_affine(a: &G2Affine) -> G2Affine {
        -*a
    }
}

/// A projective point with a random, non-trivial Z (blstrs' random points are already so;
/// adding a random point and subtracting it again keeps the value but changes Z).
fn rerandomized<G: TestGroup>(p: G, rng: &mut ThreadRng) -> G {
    let t = G::random(&mut *rng);
    p + t - t
}

fn curve_inputs<G: TestGroup>(rng: &mut ThreadRng, n: usize) -> (Vec<G>, Vec<G>, Vec<G::Affine>) {
    let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
    let p = G::random(&mut *rng);
    let q = G::random(&mut *rng);
    let inf = G::identity();
    // Edge cases: infinity on either side, P + P, P + (-P), P + 2P, with c = b as affine.
    let edges: Vec<(G, G)> = vec![
        (inf, inf),
        (inf, p),
        (p, inf),
        (p, p),
        (p, -p),
        (p, p.double()),
        (p.double(), p),
        (rerandomized(p, rng), p),
        (rerandomized(p, rng), -p),
        (p, q),
        (G::generator(), G::generator()),
    ];
    for (x, y) in edges {
        a.push(x);
        b.push(rerandomized(y, rng));
        c.push(G::Affine::from(y));
    }
    for _ in 0..n {
        let x = G::random(&mut *rng);
        let y = G::random(&mut *rng);
        a.push(x);
        b.push(y);
        c.push(G::Affine::from(y));
    }
    (a, b, c)
}

fn expected_point<G: TestGroup>(op: CurveOp, a: &G, b: &G, c: &G::Affine) -> G {
    let c_proj: G = (*c).into();
    match op {
        CurveOp::XyzzAddAffine => *a + c_proj,
        CurveOp::XyzzAdd | CurveOp::JacobianAdd => *a + b,
        CurveOp::XyzzDbl | CurveOp::JacobianDbl => a.double(),
        CurveOp::XyzzNeg | CurveOp::JacobianNeg => -*a,
        CurveOp::AffineNeg => G::neg_affine(c).into(),
        CurveOp::AffineToXyzz => c_proj,
        CurveOp::XyzzAddAffineTwice => *a + c_proj + c_proj,
    }
}

fn check_curve<G: TestGroup>(device: &kiln_cuda::Device, n: usize) {
    let mut rng = rand::thread_rng();
    let (a, b, c) = curve_inputs::<G>(&mut rng, n);
    for op in CurveOp::ALL {
        let got = G::gpu(device, op, &a, &b, &c).unwrap_or_else(|e| panic!("{} {op:?}: {e}", G::NAME));
        let mut bad = 0;
        for i in 0..a.len() {
            let want = expected_point(op, &a[i], &b[i], &c[i]);
            if got[i] != want {
                bad += 1;
                if bad <= 5 {
                    eprintln!(
                        "{} {op:?} [{i}]: a = {:?}, b = {:?}\n  gpu  {:?} (words {:x?})\n  want {:?}",
                        G::NAME,
                        G::Affine::from(a[i]),
                        G::Affine::from(b[i]),
                        G::Affine::from(got[i]),
                        words(&got[i]),
                        G::Affine::from(want)
                    );
                }
            }
        }
        assert_eq!(bad, 0, "{} {op:?}: {bad} of {} points differ from blstrs (first ones above)", G::NAME, a.len());
    }
}

fn check_batch<G: TestGroup>(device: &kiln_cuda::Device, n: usize) {
    let mut rng = rand::thread_rng();
    let mut points: Vec<G> = (0..n).map(|_| G::random(&mut rng)).collect();
    // Infinity at the start, in the middle and at the end of chunks.
    for i in [0, 1, 7, n / 2, n - 1] {
        points[i] = G::identity();
    }
    let want: Vec<G::Affine> = points.iter().map(|p| G::Affine::from(*p)).collect();
    for via_xyzz in [false, true] {
        for chunk in [1u32, 3, 16, 64] {
            let got = G::batch(device, &points, chunk, via_xyzz).unwrap();
            for i in 0..n {
                assert_eq!(
                    got[i],
                    want[i],
                    "{} batch to affine (chunk {chunk}, via_xyzz {via_xyzz}) [{i}]: words {:x?}",
                    G::NAME,
                    words(&got[i])
                );
                if want[i] == G::Affine::from(G::identity()) {
                    assert!(words(&got[i]).iter().all(|&w| w == 0), "infinity must be all zeros");
                }
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU: cargo xtask gpu-bundle"]
fn g1_ops_match_blstrs() {
    let Some(device) = gpu_or_skip("g1_ops_match_blstrs") else { return };
    check_curve::<G1Projective>(&device, n_random());
}

#[test]
#[ignore = "needs a CUDA GPU: cargo xtask gpu-bundle"]
fn g2_ops_match_blstrs() {
    let Some(device) = gpu_or_skip("g2_ops_match_blstrs") else { return };
    // G2 on the host is ~3x slower per op: 1024 random points per op plus the edges.
    check_curve::<G2Projective>(&device, n_random() / 4);
}

#[test]
#[ignore = "needs a CUDA GPU: cargo xtask gpu-bundle"]
fn g1_batch_to_affine_matches_blstrs() {
    let Some(device) = gpu_or_skip("g1_batch_to_affine_matches_blstrs") else { return };
    check_batch::<G1Projective>(&device, if small_sizes() { 100 } else { 1000 });
}

#[test]
#[ignore = "needs a CUDA GPU: cargo xtask gpu-bundle"]
fn g2_batch_to_affine_matches_blstrs() {
    let Some(device) = gpu_or_skip("g2_batch_to_affine_matches_blstrs") else { return };
    check_batch::<G2Projective>(&device, if small_sizes() { 100 } else { 500 });
}

#[test]
#[ignore = "needs a CUDA GPU: cargo xtask gpu-bundle"]
fn mismatched_lengths_are_errors() {
    let Some(device) = gpu_or_skip("mismatched_lengths_are_errors") else { return };
    let err = gpu::fr_op(&device, FieldOp::Add, &[Scalar::ONE], &[]).unwrap_err();
    assert!(err.to_string().contains("lengths differ"), "{err}");
    let err = gpu::g1_batch_to_affine(&device, &[G1Projective::identity()], 0, false).unwrap_err();
    assert!(err.to_string().contains("chunk"), "{err}");
}
