//! The conformance kit every MSM backend passes: written once, run against the CPU MSM in CI
//! (`tests/conformance.rs`) and against the GPU MSM ([`GpuMsm`], over
//! [`MsmContext`](crate::gpu::MsmContext)) on a GPU machine (`tests/gpu.rs`).
//!
//! A backend is an [`MsmBackend`]: the plain MSM, one scalar vector over several base sets
//! (`multi`), and the 0/1/other split path, in G1 and G2. [`check_msm`] checks, in both groups:
//! - sizes 0 to 1025 (odd, powers of two and their neighbours) with a mix of every scalar
//!   class, bases with the identity and repeated points;
//! - every scalar class at one size: all zero, all one, all r − 1, all equal, Filecoin's
//!   51% zero / 47% one / 2% other, only 0 and 1, neither 0 nor 1, uniform, edge values
//!   (0, 1, 2, r − 1, r − 2, (r ± 1)/2, 2^k, 2^k − 1, r − 2^k, every window digit equal to
//!   half the buckets for each window size), small integers, powers of two, heavy duplicates;
//! - every kind of base set: random, some identity, all identity, one point repeated, runs
//!   of repeated points, pairs P, −P that cancel;
//! - the plain, multi and split paths of each against a naive reference sum `Σ k_i · P_i`
//!   (one scalar multiplication per term over blstrs), and larger sizes against bases with
//!   known discrete logs ([`crate::dlog`]);
//! - wrong lengths are errors, not panics.
//!
//! Every run draws fresh inputs from the seed it is given (say which in a failure: every
//! message names it).

use std::fmt::Debug;

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::Field;
use group::prime::{PrimeCurve, PrimeCurveAffine};
use group::{Curve, Group};
use rand_chacha::ChaCha20Rng;
use rand_core::{RngCore, SeedableRng};

use crate::dlog::KnownDlog;
use crate::split::{ScalarSplit, msm_g1_split, msm_g2_split};
use crate::{MsmError, cpu};

#[cfg(feature = "cuda")]
mod gpu;
#[cfg(feature = "cuda")]
pub use gpu::GpuMsm;

/// The largest size [`check_msm`] uses besides its `large` sizes: a GPU backend needs at
/// least this capacity (and the largest of `large`).
pub const SWEEP_MAX: usize = 1025;

/// An MSM implementation under test. Every method computes `Σ scalars[i] · bases[i]`.
pub trait MsmBackend {
    /// Names the backend in failure messages.
    fn name(&self) -> String;
    /// The plain MSM in G1.
    fn msm_g1(&mut self, bases: &[G1Affine], scalars: &[Scalar]) -> Result<G1Projective, MsmError>;
    /// The plain MSM in G2.
    fn msm_g2(&mut self, bases: &[G2Affine], scalars: &[Scalar]) -> Result<G2Projective, MsmError>;
    /// One scalar vector over each base set (the A, B_G1 and L sums of a proof).
    fn msm_g1_multi(&mut self, bases: &[&[G1Affine]], scalars: &[Scalar]) -> Result<Vec<G1Projective>, MsmError>;
    /// The G2 form of [`MsmBackend::msm_g1_multi`].
    fn msm_g2_multi(&mut self, bases: &[&[G2Affine]], scalars: &[Scalar]) -> Result<Vec<G2Projective>, MsmError>;
    /// One 0/1/other split of `scalars`, then the split sum over each base set.
    fn msm_g1_split(&mut self, bases: &[&[G1Affine]], scalars: &[Scalar]) -> Result<Vec<G1Projective>, MsmError>;
    /// The G2 form of [`MsmBackend::msm_g1_split`].
    fn msm_g2_split(&mut self, bases: &[&[G2Affine]], scalars: &[Scalar]) -> Result<Vec<G2Projective>, MsmError>;
}

/// The CPU backend: [`crate::cpu`] and [`crate::split`].
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuMsm;

impl MsmBackend for CpuMsm {
    fn name(&self) -> String {
        "CPU MSM".into()
    }
    fn msm_g1(&mut self, bases: &[G1Affine], scalars: &[Scalar]) -> Result<G1Projective, MsmError> {
        cpu::msm_g1(bases, scalars)
    }
    fn msm_g2(&mut self, bases: &[G2Affine], scalars: &[Scalar]) -> Result<G2Projective, MsmError> {
        cpu::msm_g2(bases, scalars)
    }
    fn msm_g1_multi(&mut self, bases: &[&[G1Affine]], scalars: &[Scalar]) -> Result<Vec<G1Projective>, MsmError> {
        bases.iter().map(|b| cpu::msm_g1(b, scalars)).collect()
    }
    fn msm_g2_multi(&mut self, bases: &[&[G2Affine]], scalars: &[Scalar]) -> Result<Vec<G2Projective>, MsmError> {
        bases.iter().map(|b| cpu::msm_g2(b, scalars)).collect()
    }
    fn msm_g1_split(&mut self, bases: &[&[G1Affine]], scalars: &[Scalar]) -> Result<Vec<G1Projective>, MsmError> {
        let split = ScalarSplit::classify(scalars)?;
        bases.iter().map(|b| msm_g1_split(b, scalars, &split)).collect()
    }
    fn msm_g2_split(&mut self, bases: &[&[G2Affine]], scalars: &[Scalar]) -> Result<Vec<G2Projective>, MsmError> {
        let split = ScalarSplit::classify(scalars)?;
        bases.iter().map(|b| msm_g2_split(b, scalars, &split)).collect()
    }
}

/// The kit's view of one group: its points and the backend's three paths in it.
trait KitGroup {
    const NAME: &'static str;
    type Point: PrimeCurve<Scalar = Scalar, Affine = Self::Affine> + Debug;
    type Affine: PrimeCurveAffine<Curve = Self::Point, Scalar = Scalar> + Debug + Send + Sync;
    fn plain(b: &mut dyn MsmBackend, bases: &[Self::Affine], s: &[Scalar]) -> Result<Self::Point, MsmError>;
    fn multi(b: &mut dyn MsmBackend, bases: &[&[Self::Affine]], s: &[Scalar]) -> Result<Vec<Self::Point>, MsmError>;
    fn split(b: &mut dyn MsmBackend, bases: &[&[Self::Affine]], s: &[Scalar]) -> Result<Vec<Self::Point>, MsmError>;
    fn dlog_bases(dl: &KnownDlog, n: usize) -> Vec<Self::Affine>;
}

struct G1;
struct G2;

impl KitGroup for G1 {
    const NAME: &'static str = "G1";
    type Point = G1Projective;
    type Affine = G1Affine;
    fn plain(b: &mut dyn MsmBackend, bases: &[G1Affine], s: &[Scalar]) -> Result<G1Projective, MsmError> {
        b.msm_g1(bases, s)
    }
    fn multi(b: &mut dyn MsmBackend, bases: &[&[G1Affine]], s: &[Scalar]) -> Result<Vec<G1Projective>, MsmError> {
        b.msm_g1_multi(bases, s)
    }
    fn split(b: &mut dyn MsmBackend, bases: &[&[G1Affine]], s: &[Scalar]) -> Result<Vec<G1Projective>, MsmError> {
        b.msm_g1_split(bases, s)
    }
    fn dlog_bases(dl: &KnownDlog, n: usize) -> Vec<G1Affine> {
        dl.g1_bases(n)
    }
}

impl KitGroup for G2 {
    const NAME: &'static str = "G2";
    type Point = G2Projective;
    type Affine = G2Affine;
    fn plain(b: &mut dyn MsmBackend, bases: &[G2Affine], s: &[Scalar]) -> Result<G2Projective, MsmError> {
        b.msm_g2(bases, s)
    }
    fn multi(b: &mut dyn MsmBackend, bases: &[&[G2Affine]], s: &[Scalar]) -> Result<Vec<G2Projective>, MsmError> {
        b.msm_g2_multi(bases, s)
    }
    fn split(b: &mut dyn MsmBackend, bases: &[&[G2Affine]], s: &[Scalar]) -> Result<Vec<G2Projective>, MsmError> {
        b.msm_g2_split(bases, s)
    }
    fn dlog_bases(dl: &KnownDlog, n: usize) -> Vec<G2Affine> {
        dl.g2_bases(n)
    }
}

/// The classes of scalar vectors the kit draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ScalarKind {
    AllZero,
    AllOne,
    AllMinusOne,
    AllEqual,
    /// 51% zero, 47% one, 2% other: a 2 KiB-sector PoRep's aux values (ARCHITECTURE.md §3).
    Filecoin,
    ZeroOne,
    NeitherZeroNorOne,
    Uniform,
    Edge,
    SmallIntegers,
    PowersOfTwo,
    HeavyDuplicates,
    /// Each scalar drawn from a random one of the classes above.
    Mixed,
}

impl ScalarKind {
    const ALL: [ScalarKind; 13] = [
        ScalarKind::AllZero,
        ScalarKind::AllOne,
        ScalarKind::AllMinusOne,
        ScalarKind::AllEqual,
        ScalarKind::Filecoin,
        ScalarKind::ZeroOne,
        ScalarKind::NeitherZeroNorOne,
        ScalarKind::Uniform,
        ScalarKind::Edge,
        ScalarKind::SmallIntegers,
        ScalarKind::PowersOfTwo,
        ScalarKind::HeavyDuplicates,
        ScalarKind::Mixed,
    ];
}

/// `2^k` in Fr.
fn pow2(k: u64) -> Scalar {
    Scalar::from(2u64).pow_vartime([k])
}

/// Scalars at the edges of the field and of the signed-digit windows: 0, 1, 2, r − 1, r − 2,
/// (r − 1)/2, (r + 1)/2, 2^k, 2^k − 1 and r − 2^k at word and top boundaries, and for every
/// window size c of 2 to 20 the scalar whose every c-bit digit is 2^(c−1) (half the buckets:
/// the digit that a signed-digit recoding turns into −2^(c−1) and a carry).
fn edge_values() -> Vec<Scalar> {
    let half = Scalar::from(2u64).invert().unwrap();
    let mut v = vec![
        Scalar::ZERO,
        Scalar::ONE,
        Scalar::from(2u64),
        -Scalar::ONE,
        -Scalar::from(2u64),
        (-Scalar::ONE) * half,               // (r − 1)/2
        (-Scalar::ONE) * half + Scalar::ONE, // (r + 1)/2
    ];
    for k in [1u64, 31, 32, 63, 64, 127, 128, 191, 192, 253, 254] {
        v.extend([pow2(k), pow2(k) - Scalar::ONE, -pow2(k)]);
    }
    for c in 2u64..=20 {
        // Σ_j 2^(j·c + c − 1) over the windows below bit 254 (stays below r).
        let digits = (0..).take_while(|j| j * c + c - 1 < 254).map(|j| pow2(j * c + c - 1)).sum();
        v.push(digits);
    }
    v
}

fn random_other(rng: &mut ChaCha20Rng) -> Scalar {
    loop {
        let s = Scalar::random(&mut *rng);
        if !bool::from(s.is_zero()) && s != Scalar::ONE {
            return s;
        }
    }
}

fn scalars(kind: ScalarKind, n: usize, rng: &mut ChaCha20Rng) -> Vec<Scalar> {
    let edge = edge_values();
    let equal = Scalar::random(&mut *rng);
    let few = [random_other(rng), -Scalar::ONE, Scalar::from(7u64)];
    let one = |kind: ScalarKind, i: usize, rng: &mut ChaCha20Rng| match kind {
        ScalarKind::AllZero => Scalar::ZERO,
        ScalarKind::AllOne => Scalar::ONE,
        ScalarKind::AllMinusOne => -Scalar::ONE,
        ScalarKind::AllEqual => equal,
        ScalarKind::Filecoin => match rng.next_u32() % 100 {
            0..51 => Scalar::ZERO,
            51..98 => Scalar::ONE,
            _ => random_other(rng),
        },
        ScalarKind::ZeroOne => Scalar::from(u64::from(rng.next_u32() & 1)),
        ScalarKind::NeitherZeroNorOne => random_other(rng),
        ScalarKind::Uniform => Scalar::random(&mut *rng),
        ScalarKind::Edge => edge[i % edge.len()],
        ScalarKind::SmallIntegers => Scalar::from((i % 300) as u64),
        ScalarKind::PowersOfTwo => pow2((i / 2 % 255) as u64) - Scalar::from((i % 2) as u64),
        ScalarKind::HeavyDuplicates => few[rng.next_u32() as usize % few.len()],
        ScalarKind::Mixed => unreachable!("drawn per scalar below"),
    };
    (0..n)
        .map(|i| {
            let k = match kind {
                ScalarKind::Mixed => ScalarKind::ALL[rng.next_u32() as usize % (ScalarKind::ALL.len() - 1)],
                k => k,
            };
            one(k, i, rng)
        })
        .collect()
}

/// The kinds of base sets the kit draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BaseKind {
    Random,
    /// Every third base the identity.
    SomeIdentity,
    AllIdentity,
    /// One point n times.
    OnePoint,
    /// Runs of four equal points.
    Repeated,
    /// Pairs P, −P.
    Cancelling,
    /// Each base a random one of: random, identity, a repeat of an earlier base, its negation.
    Mixed,
}

impl BaseKind {
    const ALL: [BaseKind; 7] = [
        BaseKind::Random,
        BaseKind::SomeIdentity,
        BaseKind::AllIdentity,
        BaseKind::OnePoint,
        BaseKind::Repeated,
        BaseKind::Cancelling,
        BaseKind::Mixed,
    ];
}

fn bases<G: KitGroup>(kind: BaseKind, n: usize, rng: &mut ChaCha20Rng) -> Vec<G::Affine> {
    let random = |rng: &mut ChaCha20Rng| (G::Point::generator() * Scalar::random(&mut *rng)).to_affine();
    let mut out: Vec<G::Affine> = Vec::with_capacity(n);
    let first = random(rng);
    for i in 0..n {
        let p = match kind {
            BaseKind::Random => random(rng),
            BaseKind::SomeIdentity if i % 3 == 1 => G::Affine::identity(),
            BaseKind::SomeIdentity => random(rng),
            BaseKind::AllIdentity => G::Affine::identity(),
            BaseKind::OnePoint => first,
            BaseKind::Repeated if i % 4 != 0 => out[i - 1],
            BaseKind::Repeated => random(rng),
            BaseKind::Cancelling if i % 2 == 1 => -out[i - 1],
            BaseKind::Cancelling => random(rng),
            BaseKind::Mixed => match (rng.next_u32() % 6, i) {
                (0, _) => G::Affine::identity(),
                (1, i) if i > 0 => out[rng.next_u32() as usize % i],
                (2, i) if i > 0 => -out[rng.next_u32() as usize % i],
                _ => random(rng),
            },
        };
        out.push(p);
    }
    out
}

/// `Σ k_i · P_i`, one scalar multiplication per term: the definition, nothing shared with
/// any backend.
fn naive<G: KitGroup>(bases: &[G::Affine], scalars: &[Scalar]) -> G::Point {
    bases.iter().zip(scalars).fold(G::Point::identity(), |acc, (b, k)| acc + b.to_curve() * k)
}

/// Runs the three paths over two base sets and `scalars`, and compares each with `want`.
fn check_paths<G: KitGroup>(
    b: &mut dyn MsmBackend,
    sets: [&[G::Affine]; 2],
    scalars: &[Scalar],
    want: [G::Point; 2],
    case: &str,
) {
    let name = b.name();
    let got = G::plain(b, sets[0], scalars).unwrap_or_else(|e| panic!("{name}: {case}: plain: {e}"));
    assert_eq!(got, want[0], "{name}: {case}: plain sum differs from the reference");
    let got = G::multi(b, &sets, scalars).unwrap_or_else(|e| panic!("{name}: {case}: multi: {e}"));
    assert_eq!(got, want, "{name}: {case}: multi (one scalar vector, two base sets) differs from the reference");
    let got = G::split(b, &sets, scalars).unwrap_or_else(|e| panic!("{name}: {case}: split: {e}"));
    assert_eq!(got, want, "{name}: {case}: 0/1/other split path differs from the reference");
}

/// One case: two base sets of `base_kind` (the second always `Mixed`), scalars of
/// `scalar_kind`, every path against the naive reference.
fn check_case<G: KitGroup>(
    b: &mut dyn MsmBackend,
    n: usize,
    base_kind: BaseKind,
    scalar_kind: ScalarKind,
    rng: &mut ChaCha20Rng,
    seed: u64,
) {
    let (first, second) = (bases::<G>(base_kind, n, rng), bases::<G>(BaseKind::Mixed, n, rng));
    let k = scalars(scalar_kind, n, rng);
    let want = [naive::<G>(&first, &k), naive::<G>(&second, &k)];
    let case = format!("{} n = {n}, bases {base_kind:?}, scalars {scalar_kind:?}, seed {seed}", G::NAME);
    check_paths::<G>(b, [&first, &second], &k, want, &case);
}

fn check_group<G: KitGroup>(b: &mut dyn MsmBackend, sweep: &[usize], large: &[usize], seed: u64) {
    let mut rng = ChaCha20Rng::seed_from_u64(seed ^ G::NAME.len() as u64);
    for &n in sweep {
        check_case::<G>(b, n, BaseKind::Mixed, ScalarKind::Mixed, &mut rng, seed);
    }
    for kind in ScalarKind::ALL {
        check_case::<G>(b, 129, BaseKind::SomeIdentity, kind, &mut rng, seed);
    }
    for kind in BaseKind::ALL {
        for scalars in [ScalarKind::Uniform, ScalarKind::AllOne, ScalarKind::AllEqual, ScalarKind::Filecoin] {
            check_case::<G>(b, 100, kind, scalars, &mut rng, seed);
        }
    }
    // Larger sizes against known discrete logs: Σ k_i · (d_i · G) = (Σ k_i · d_i) · G.
    for &n in large {
        let dls = [KnownDlog::random(&mut rng), KnownDlog::random(&mut rng)];
        let sets = [G::dlog_bases(&dls[0], n), G::dlog_bases(&dls[1], n)];
        for kind in [ScalarKind::Uniform, ScalarKind::Filecoin, ScalarKind::Mixed] {
            let k = scalars(kind, n, &mut rng);
            let want = dls.map(|dl| G::Point::generator() * dl.weighted_sum(&k));
            let case = format!("{} n = {n}, known-dlog bases, scalars {kind:?}, seed {seed}", G::NAME);
            check_paths::<G>(b, [&sets[0], &sets[1]], &k, want, &case);
        }
    }
    // Wrong lengths are errors.
    let name = b.name();
    let (set, k) = (bases::<G>(BaseKind::Random, 5, &mut rng), scalars(ScalarKind::Uniform, 4, &mut rng));
    assert!(G::plain(b, &set, &k).is_err(), "{name}: {}: 5 bases with 4 scalars accepted by plain", G::NAME);
    assert!(G::multi(b, &[&set], &k).is_err(), "{name}: {}: 5 bases with 4 scalars accepted by multi", G::NAME);
    assert!(G::split(b, &[&set], &k).is_err(), "{name}: {}: 5 bases with 4 scalars accepted by split", G::NAME);
    assert!(G::multi(b, &[&set[..4], &set], &k).is_err(), "{name}: {}: ragged base sets accepted by multi", G::NAME);
}

/// The whole kit against `backend`, inputs drawn from `seed`; `large` sizes (each at most the
/// backend's capacity) are checked against bases with known discrete logs.
///
/// # Panics
/// On the first result that differs from the reference, naming the case and the seed.
pub fn check_msm(backend: &mut dyn MsmBackend, large: &[usize], seed: u64) {
    const G1_SWEEP: [usize; 19] =
        [0, 1, 2, 3, 4, 7, 31, 32, 33, 64, 127, 128, 129, 255, 256, 257, 1000, 1024, SWEEP_MAX];
    const G2_SWEEP: [usize; 12] = [0, 1, 2, 3, 4, 7, 31, 32, 33, 64, 127, 256];
    check_group::<G1>(backend, &G1_SWEEP, large, seed);
    check_group::<G2>(backend, &G2_SWEEP, large, seed);
}

#[cfg(test)]
mod tests {
    use ff::PrimeField;

    use super::*;

    /// The edge values are what they claim: r − 1 + 1 = 0, (r − 1)/2 · 2 = r − 1, and the
    /// window-digit scalars are below 2^254 (so no reduction changed their digits).
    #[test]
    fn edge_values_are_what_they_claim() {
        let e = edge_values();
        assert_eq!(e[3] + Scalar::ONE, Scalar::ZERO);
        assert_eq!(e[5].double(), -Scalar::ONE);
        assert_eq!(e[6].double(), Scalar::ONE);
        for (c, s) in (2u32..=20).zip(&e[e.len() - 19..]) {
            let bytes = s.to_repr();
            assert!(bytes.as_ref()[31] < 0x40, "c = {c}: digits scalar reaches bit 254");
            let low = u32::from_le_bytes(bytes.as_ref()[..4].try_into().unwrap());
            assert_eq!(low & ((1 << c) - 1), 1 << (c - 1), "c = {c}: lowest digit is not 2^(c-1)");
        }
    }

    /// A backend with a wrong split path fails the kit: the kit can fail.
    #[test]
    fn a_wrong_backend_fails() {
        struct DropsTheLast;
        impl MsmBackend for DropsTheLast {
            fn name(&self) -> String {
                "drops the last term of a split".into()
            }
            fn msm_g1(&mut self, b: &[G1Affine], s: &[Scalar]) -> Result<G1Projective, MsmError> {
                CpuMsm.msm_g1(b, s)
            }
            fn msm_g2(&mut self, b: &[G2Affine], s: &[Scalar]) -> Result<G2Projective, MsmError> {
                CpuMsm.msm_g2(b, s)
            }
            fn msm_g1_multi(&mut self, b: &[&[G1Affine]], s: &[Scalar]) -> Result<Vec<G1Projective>, MsmError> {
                CpuMsm.msm_g1_multi(b, s)
            }
            fn msm_g2_multi(&mut self, b: &[&[G2Affine]], s: &[Scalar]) -> Result<Vec<G2Projective>, MsmError> {
                CpuMsm.msm_g2_multi(b, s)
            }
            fn msm_g1_split(&mut self, b: &[&[G1Affine]], s: &[Scalar]) -> Result<Vec<G1Projective>, MsmError> {
                let cut: Vec<&[G1Affine]> = b.iter().map(|b| &b[..b.len().saturating_sub(1)]).collect();
                CpuMsm.msm_g1_multi(&cut, &s[..s.len().saturating_sub(1)])
            }
            fn msm_g2_split(&mut self, b: &[&[G2Affine]], s: &[Scalar]) -> Result<Vec<G2Projective>, MsmError> {
                CpuMsm.msm_g2_split(b, s)
            }
        }
        let r = std::panic::catch_unwind(|| check_msm(&mut DropsTheLast, &[], 1));
        let msg = *r.expect_err("a backend that drops a term passed").downcast::<String>().unwrap();
        assert!(msg.contains("split path differs"), "{msg}");
    }
}
