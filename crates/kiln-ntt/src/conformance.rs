//! The conformance kit every NTT backend passes: written once, run against the CPU path in CI
//! (`tests/conformance.rs`) and against the GPU path ([`GpuNtt`], over
//! [`GpuDomain`](crate::gpu::GpuDomain)) on a GPU machine (`tests/gpu.rs`).
//!
//! A backend is an [`NttBackend`]: the four [`Transform`]s in place and the Groth16 H step.
//! [`check_ntt`] checks:
//! - every transform against the O(n²) definition (`A_k = Σ a_j x_k^j` at `x_k = ω^k`,
//!   `ω^-k`, `g·ω^k`, with the `1/n` and `g^-j` of the inverses) at 2^0 to 2^8, on random
//!   inputs, one-hot inputs (first, last and a random index) and constant inputs;
//! - the H step against its definition (naive transforms, `(a·b − c)/(g^n − 1)` on the
//!   coset) at 2^0 to 2^7, with full-length inputs and with inputs shorter than the domain
//!   (zero-padded by the backend);
//! - at the sizes it is given: every transform against the CPU path, round trips
//!   (`inverse ∘ forward`, `coset_inverse ∘ coset_forward`), evaluations at a few points
//!   against Horner's rule (independent of any transform), and the H step (full and padded)
//!   against the CPU path;
//! - wrong lengths are errors, not panics.
//!
//! Every run draws fresh inputs from the seed it is given; every failure names it.

use blstrs::Scalar;
use ff::Field;
use rand_chacha::ChaCha20Rng;
use rand_core::{RngCore, SeedableRng};

use crate::{Domain, NttError, cpu};

#[cfg(feature = "cuda")]
mod gpu;
#[cfg(feature = "cuda")]
pub use gpu::GpuNtt;

/// The largest domain (log2) the kit checks against the O(n²) definition.
pub const NAIVE_MAX_LOG: u32 = 8;

/// One of the four transforms, each named as in [`crate::cpu`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transform {
    /// Coefficients → evaluations on the domain ([`cpu::fft`]).
    Forward,
    /// Evaluations on the domain → coefficients ([`cpu::ifft`]).
    Inverse,
    /// Coefficients → evaluations on the coset `g·H` ([`cpu::coset_fft`]).
    CosetForward,
    /// Evaluations on the coset → coefficients ([`cpu::icoset_fft`]).
    CosetInverse,
}

impl Transform {
    /// All four.
    pub const ALL: [Transform; 4] =
        [Transform::Forward, Transform::Inverse, Transform::CosetForward, Transform::CosetInverse];

    /// The CPU path of this transform.
    pub fn cpu(self, d: &Domain, a: &mut [Scalar]) -> Result<(), NttError> {
        match self {
            Transform::Forward => cpu::fft(d, a),
            Transform::Inverse => cpu::ifft(d, a),
            Transform::CosetForward => cpu::coset_fft(d, a),
            Transform::CosetInverse => cpu::icoset_fft(d, a),
        }
    }
}

/// An NTT implementation under test.
pub trait NttBackend {
    /// Names the backend in failure messages.
    fn name(&self) -> String;
    /// `t` on `values` in place (natural order in and out); `values.len()` must be the
    /// domain's size.
    fn transform(&mut self, domain: &Domain, t: Transform, values: &mut [Scalar]) -> Result<(), NttError>;
    /// The H step ([`cpu::h_poly`]): `a`, `b`, `c` (each at most the domain's size, zero-padded
    /// to it) → the `n` coefficients of h.
    fn h_step(&mut self, domain: &Domain, a: &[Scalar], b: &[Scalar], c: &[Scalar]) -> Result<Vec<Scalar>, NttError>;
}

/// The CPU backend: [`crate::cpu`].
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuNtt;

impl NttBackend for CpuNtt {
    fn name(&self) -> String {
        "CPU NTT".into()
    }
    fn transform(&mut self, domain: &Domain, t: Transform, values: &mut [Scalar]) -> Result<(), NttError> {
        t.cpu(domain, values)
    }
    fn h_step(&mut self, domain: &Domain, a: &[Scalar], b: &[Scalar], c: &[Scalar]) -> Result<Vec<Scalar>, NttError> {
        cpu::h_poly(domain, a.to_vec(), b.to_vec(), c.to_vec())
    }
}

/// `x^e` for a small exponent.
fn pow(x: Scalar, e: usize) -> Scalar {
    x.pow_vartime([e as u64])
}

/// `Σ_j a_j · x^j` term by term (no Horner, nothing shared with a transform).
fn sum_of_powers(a: &[Scalar], x: Scalar) -> Scalar {
    let mut xj = Scalar::ONE;
    let mut acc = Scalar::ZERO;
    for v in a {
        acc += *v * xj;
        xj *= x;
    }
    acc
}

/// The definition of `t` on `a` (O(n²)).
fn naive(d: &Domain, t: Transform, a: &[Scalar]) -> Vec<Scalar> {
    let n = a.len();
    let n_inv = Scalar::from(n as u64).invert().unwrap();
    let (w, g) = (d.omega(), d.generator());
    let (w_inv, g_inv) = (w.invert().unwrap(), g.invert().unwrap());
    (0..n)
        .map(|k| match t {
            Transform::Forward => sum_of_powers(a, pow(w, k)),
            Transform::Inverse => sum_of_powers(a, pow(w_inv, k)) * n_inv,
            Transform::CosetForward => sum_of_powers(a, g * pow(w, k)),
            Transform::CosetInverse => sum_of_powers(a, pow(w_inv, k)) * n_inv * pow(g_inv, k),
        })
        .collect()
}

/// The H step by its definition: interpolate a, b, c, evaluate on the coset, `(a·b − c)/Z`
/// with `Z = g^n − 1`, interpolate back from the coset.
fn naive_h(d: &Domain, a: &[Scalar], b: &[Scalar], c: &[Scalar]) -> Vec<Scalar> {
    let n = d.size();
    let on_coset = |v: &[Scalar]| {
        let mut v = v.to_vec();
        v.resize(n, Scalar::ZERO);
        naive(d, Transform::CosetForward, &naive(d, Transform::Inverse, &v))
    };
    let (ea, eb, ec) = (on_coset(a), on_coset(b), on_coset(c));
    let z_inv = (pow(d.generator(), n) - Scalar::ONE).invert().unwrap();
    let h: Vec<Scalar> = (0..n).map(|i| (ea[i] * eb[i] - ec[i]) * z_inv).collect();
    naive(d, Transform::CosetInverse, &h)
}

fn random(n: usize, rng: &mut ChaCha20Rng) -> Vec<Scalar> {
    (0..n).map(|_| Scalar::random(&mut *rng)).collect()
}

/// Compares element by element, reporting how many differ and where the first does.
fn assert_same(got: &[Scalar], want: &[Scalar], case: &str) {
    assert_eq!(got.len(), want.len(), "{case}: lengths differ");
    let differ: Vec<usize> = (0..got.len()).filter(|&i| got[i] != want[i]).collect();
    if let Some(&i) = differ.first() {
        panic!(
            "{case}: {} of {} elements differ; first at index {i}: got {:?}, want {:?}",
            differ.len(),
            got.len(),
            got[i],
            want[i]
        );
    }
}

fn run(b: &mut dyn NttBackend, d: &Domain, t: Transform, input: &[Scalar], case: &str) -> Vec<Scalar> {
    let mut v = input.to_vec();
    b.transform(d, t, &mut v).unwrap_or_else(|e| panic!("{}: {case}: {e}", b.name()));
    v
}

/// The lengths of the padded H-step case: shorter than the domain where it has room.
fn padded_lengths(n: usize) -> [usize; 3] {
    [(n - 1).max(1), (n / 2).max(1), 1]
}

fn check_against_definition(b: &mut dyn NttBackend, rng: &mut ChaCha20Rng, seed: u64) {
    let name = b.name();
    for log_n in 0..=NAIVE_MAX_LOG {
        let d = Domain::new(log_n).unwrap();
        let n = d.size();
        let one_hot = |i: usize| (0..n).map(|j| Scalar::from(u64::from(i == j))).collect::<Vec<_>>();
        let mid = rng.next_u32() as usize % n;
        let inputs = [
            ("random", random(n, rng)),
            ("one-hot first", one_hot(0)),
            ("one-hot last", one_hot(n - 1)),
            ("one-hot random", one_hot(mid)),
            ("constant", vec![Scalar::random(&mut *rng); n]),
        ];
        for t in Transform::ALL {
            for (what, input) in &inputs {
                let case = format!("{t:?} at 2^{log_n} of a {what} input, seed {seed}");
                assert_same(&run(b, &d, t, input, &case), &naive(&d, t, input), &format!("{name}: {case}"));
            }
        }
        if log_n < NAIVE_MAX_LOG {
            for lens in [[n; 3], padded_lengths(n)] {
                let [a, bb, c] = lens.map(|l| random(l, rng));
                let case = format!("H step at 2^{log_n}, inputs of {lens:?} scalars, seed {seed}");
                let got = b.h_step(&d, &a, &bb, &c).unwrap_or_else(|e| panic!("{name}: {case}: {e}"));
                assert_same(&got, &naive_h(&d, &a, &bb, &c), &format!("{name}: {case} (against the definition)"));
            }
        }
    }
}

fn check_at(b: &mut dyn NttBackend, log_n: u32, rng: &mut ChaCha20Rng, seed: u64) {
    let name = b.name();
    let d = Domain::new(log_n).unwrap();
    let n = d.size();
    let input = random(n, rng);
    for t in Transform::ALL {
        let case = format!("{t:?} at 2^{log_n}, seed {seed}");
        let mut want = input.clone();
        t.cpu(&d, &mut want).unwrap();
        assert_same(&run(b, &d, t, &input, &case), &want, &format!("{name}: {case} (against the CPU path)"));
    }
    let points = [0, 1, n / 2 + 1, n - 1, rng.next_u32() as usize].map(|k| k % n);
    for (fwd, inv, shift) in [
        (Transform::Forward, Transform::Inverse, Scalar::ONE),
        (Transform::CosetForward, Transform::CosetInverse, d.generator()),
    ] {
        let evals = run(b, &d, fwd, &input, &format!("{fwd:?} at 2^{log_n}, seed {seed}"));
        for k in points {
            let want = cpu::evaluate(&input, shift * pow(d.omega(), k));
            assert_eq!(evals[k], want, "{name}: {fwd:?} at 2^{log_n}, seed {seed}: evaluation {k} differs from Horner");
        }
        let back = run(b, &d, inv, &evals, &format!("{inv:?} at 2^{log_n}, seed {seed}"));
        assert_same(&back, &input, &format!("{name}: {inv:?}({fwd:?}(x)) != x at 2^{log_n}, seed {seed}"));
    }
    for lens in [[n; 3], padded_lengths(n)] {
        let [a, bb, c] = lens.map(|l| random(l, rng));
        let case = format!("H step at 2^{log_n}, inputs of {lens:?} scalars, seed {seed}");
        let got = b.h_step(&d, &a, &bb, &c).unwrap_or_else(|e| panic!("{name}: {case}: {e}"));
        let want = cpu::h_poly(&d, a, bb, c).unwrap();
        assert_same(&got, &want, &format!("{name}: {case} (against the CPU path)"));
    }
}

fn check_errors(b: &mut dyn NttBackend, rng: &mut ChaCha20Rng) {
    let name = b.name();
    let d = Domain::new(3).unwrap();
    for t in Transform::ALL {
        let r = b.transform(&d, t, &mut random(7, rng));
        assert!(
            matches!(r, Err(NttError::LengthMismatch { expected: 8, got: 7, .. })),
            "{name}: {t:?} of 7 scalars on a domain of 8: {r:?}"
        );
    }
    let (ok, long) = (random(8, rng), random(9, rng));
    let r = b.h_step(&d, &ok, &ok, &long);
    assert!(matches!(r, Err(NttError::InputTooLong { len: 9, size: 8, .. })), "{name}: H step of 9 scalars: {r:?}");
}

/// The whole kit against `backend`, inputs drawn from `seed`: the definition at 2^0 to
/// 2^[`NAIVE_MAX_LOG`], the CPU path, round trips and Horner at each of `logs`.
///
/// # Panics
/// On the first result that differs, naming the case and the seed.
pub fn check_ntt(backend: &mut dyn NttBackend, logs: &[u32], seed: u64) {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    check_against_definition(backend, &mut rng, seed);
    for &log_n in logs {
        check_at(backend, log_n, &mut rng, seed);
    }
    check_errors(backend, &mut rng);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A backend whose coset inverse forgets the `g^-i` fails the kit: the kit can fail.
    #[test]
    fn a_wrong_backend_fails() {
        struct ForgetsTheCoset;
        impl NttBackend for ForgetsTheCoset {
            fn name(&self) -> String {
                "coset inverse without g^-i".into()
            }
            fn transform(&mut self, d: &Domain, t: Transform, v: &mut [Scalar]) -> Result<(), NttError> {
                match t {
                    Transform::CosetInverse => cpu::ifft(d, v),
                    t => t.cpu(d, v),
                }
            }
            fn h_step(
                &mut self,
                d: &Domain,
                a: &[Scalar],
                b: &[Scalar],
                c: &[Scalar],
            ) -> Result<Vec<Scalar>, NttError> {
                CpuNtt.h_step(d, a, b, c)
            }
        }
        let r = std::panic::catch_unwind(|| check_ntt(&mut ForgetsTheCoset, &[], 1));
        let msg = *r.expect_err("a wrong coset inverse passed").downcast::<String>().unwrap();
        assert!(msg.contains("CosetInverse at 2^1"), "{msg}");
    }
}
