//! The CPU path: parallel (rayon) radix-2 transforms, the reference for the GPU path.
//!
//! Every function matches bellperson's `EvaluationDomain` method of the same name bit for
//! bit (field arithmetic is exact, so any correct transform over the same `ω` and `g` does).
//! Inputs are in natural order and outputs are in natural order.

use blstrs::Scalar;
use ff::Field;
use rayon::prelude::*;

use crate::{Domain, NttError};

/// Below this many points the transform runs on one thread: rayon's overhead would dominate.
const SERIAL_LOG: u32 = 10;
/// Stages whose butterflies span less than this many points run chunk by chunk, so a chunk
/// (128 KiB) stays in the core's cache through all of them.
const CHUNK_LOG: u32 = 12;

fn check_len(d: &Domain, a: &[Scalar], what: &'static str) -> Result<(), NttError> {
    if a.len() != d.size() {
        return Err(NttError::LengthMismatch { what, expected: d.size(), got: a.len() });
    }
    Ok(())
}

/// Evaluations `a(ω^i)` of the polynomial with coefficients `a` (in place, natural order).
pub fn fft(d: &Domain, a: &mut [Scalar]) -> Result<(), NttError> {
    check_len(d, a, "cpu::fft")?;
    fft_unchecked(d, a);
    Ok(())
}

/// Coefficients from evaluations on the domain: the inverse of [`fft`] (in place).
pub fn ifft(d: &Domain, a: &mut [Scalar]) -> Result<(), NttError> {
    check_len(d, a, "cpu::ifft")?;
    ifft_unchecked(d, a);
    Ok(())
}

/// Evaluations on the coset `g·H`: `a(g·ω^i)` (multiply coefficient `i` by `g^i`, then [`fft`]).
pub fn coset_fft(d: &Domain, a: &mut [Scalar]) -> Result<(), NttError> {
    check_len(d, a, "cpu::coset_fft")?;
    distribute_powers(a, d.generator());
    fft_unchecked(d, a);
    Ok(())
}

/// Coefficients from evaluations on the coset `g·H`: the inverse of [`coset_fft`].
pub fn icoset_fft(d: &Domain, a: &mut [Scalar]) -> Result<(), NttError> {
    check_len(d, a, "cpu::icoset_fft")?;
    ifft_unchecked(d, a);
    distribute_powers(a, d.generator_inv());
    Ok(())
}

/// Divides evaluations on the coset by the vanishing polynomial `Z(x) = x^n - 1`, which is
/// the constant `g^n - 1` there.
pub fn divide_by_z_on_coset(d: &Domain, a: &mut [Scalar]) -> Result<(), NttError> {
    check_len(d, a, "cpu::divide_by_z_on_coset")?;
    scale(a, d.z_on_coset_inv());
    Ok(())
}

/// The Groth16 H step exactly as bellperson's prover does it: pad `a`, `b`, `c` with zeros
/// to the domain size, `ifft`, `coset_fft` each, `a·b - c`, divide by Z on the coset,
/// `icoset_fft`. Returns the `n` coefficients (the prover uses the first `n - 1` for the H MSM).
pub fn h_poly(d: &Domain, a: Vec<Scalar>, b: Vec<Scalar>, c: Vec<Scalar>) -> Result<Vec<Scalar>, NttError> {
    let n = d.size();
    let mut bufs = [("h_poly: a", a), ("h_poly: b", b), ("h_poly: c", c)];
    for (what, v) in &mut bufs {
        if v.len() > n {
            return Err(NttError::InputTooLong { what, len: v.len(), size: n });
        }
        v.resize(n, Scalar::ZERO);
    }
    let [(_, mut a), (_, mut b), (_, mut c)] = bufs;
    for v in [&mut a, &mut b, &mut c] {
        ifft_unchecked(d, v);
        distribute_powers(v, d.generator());
        fft_unchecked(d, v);
    }
    let z_inv = d.z_on_coset_inv();
    // Same order of operations as bellperson (mul, sub, then scale): exact arithmetic makes
    // any order equal, but this one is the obvious match.
    a.par_iter_mut().zip(b.par_iter()).zip(c.par_iter()).for_each(|((a, b), c)| *a = (*a * b - c) * z_inv);
    drop((b, c));
    ifft_unchecked(d, &mut a);
    distribute_powers(&mut a, d.generator_inv());
    Ok(a)
}

/// Evaluates the polynomial with coefficients `coeffs` at `x` (Horner, parallel over chunks).
/// Used to check transforms too large for a full CPU reference.
pub fn evaluate(coeffs: &[Scalar], x: Scalar) -> Scalar {
    const CHUNK: usize = 1 << 16;
    // Σ_k x^(k·CHUNK) · chunk_k(x), each chunk by Horner.
    let x_chunk = x.pow_vartime([CHUNK as u64]);
    let parts: Vec<Scalar> =
        coeffs.par_chunks(CHUNK).map(|c| c.iter().rev().fold(Scalar::ZERO, |acc, v| acc * x + v)).collect();
    parts.iter().rev().fold(Scalar::ZERO, |acc, v| acc * x_chunk + v)
}

pub(crate) fn fft_unchecked(d: &Domain, a: &mut [Scalar]) {
    let log_n = d.log_size();
    if log_n == 0 {
        return;
    }
    bit_reverse(a, log_n);
    dit_stages(a, d.twiddles(), log_n);
}

pub(crate) fn ifft_unchecked(d: &Domain, a: &mut [Scalar]) {
    // DFT with ω^-1 = DFT with ω followed by i -> -i (mod n): a'[k] = A[n - k].
    fft_unchecked(d, a);
    a[1..].reverse();
    scale(a, d.size_inv());
}

/// `a[i] *= x^i`.
pub(crate) fn distribute_powers(a: &mut [Scalar], x: Scalar) {
    const CHUNK: usize = 1 << 12;
    a.par_chunks_mut(CHUNK).enumerate().for_each(|(i, chunk)| {
        let mut p = x.pow_vartime([(i * CHUNK) as u64]);
        for v in chunk {
            *v *= p;
            p *= x;
        }
    });
}

fn scale(a: &mut [Scalar], x: Scalar) {
    a.par_iter_mut().with_min_len(1 << 10).for_each(|v| *v *= x);
}

/// Bit-reversal permutation of `a` (`a.len() == 2^log_n`, `log_n >= 1`).
fn bit_reverse(a: &mut [Scalar], log_n: u32) {
    let n = a.len();
    let shift = usize::BITS - log_n;
    if log_n <= SERIAL_LOG {
        for i in 0..n {
            let j = i.reverse_bits() >> shift;
            if i < j {
                a.swap(i, j);
            }
        }
        return;
    }
    // Parallel swaps: pair {i, rev(i)} is touched only by the iteration with the smaller index.
    struct Ptr(*mut Scalar);
    // SAFETY: the pointer is only used for the disjoint swaps described above.
    unsafe impl Sync for Ptr {}
    let ptr = Ptr(a.as_mut_ptr());
    let ptr = &ptr;
    (0..n).into_par_iter().with_min_len(1 << 12).for_each(move |i| {
        let j = i.reverse_bits() >> shift;
        if i < j {
            // SAFETY: i, j < n; each unordered pair {i, j} is swapped by exactly one iteration
            // (the one with i < j), and no other iteration reads or writes index i or j.
            unsafe { std::ptr::swap(ptr.0.add(i), ptr.0.add(j)) };
        }
    });
}

/// Cooley-Tukey butterflies (input bit-reversed, output natural). `tw[t] = ω^t`, `t < n/2`.
fn dit_stages(a: &mut [Scalar], tw: &[Scalar], log_n: u32) {
    let n = a.len();
    let chunk_log = log_n.min(CHUNK_LOG);
    let chunk = 1usize << chunk_log;
    // Stages with half-span m < chunk: each chunk on its own, all those stages in cache.
    let small = |c: &mut [Scalar]| {
        let mut m = 1;
        while m < chunk {
            let stride = n / (2 * m); // ω_{2m}^r = ω^(r·n/(2m))
            for block in c.chunks_exact_mut(2 * m) {
                let (lo, hi) = block.split_at_mut(m);
                for (r, (x, y)) in lo.iter_mut().zip(hi.iter_mut()).enumerate() {
                    butterfly(x, y, &tw[r * stride]);
                }
            }
            m *= 2;
        }
    };
    if log_n <= SERIAL_LOG {
        small(a);
    } else {
        a.par_chunks_mut(chunk).for_each(small);
    }
    // Remaining stages: parallel over butterflies.
    const PAR: usize = 1 << 10;
    let mut m = chunk;
    while m < n {
        let stride = n / (2 * m);
        a.par_chunks_mut(2 * m).for_each(|block| {
            let (lo, hi) = block.split_at_mut(m);
            lo.par_chunks_mut(PAR).zip(hi.par_chunks_mut(PAR)).enumerate().for_each(|(k, (lo, hi))| {
                for (r, (x, y)) in lo.iter_mut().zip(hi.iter_mut()).enumerate() {
                    butterfly(x, y, &tw[(k * PAR + r) * stride]);
                }
            });
        });
        m *= 2;
    }
}

#[inline(always)]
fn butterfly(x: &mut Scalar, y: &mut Scalar, w: &Scalar) {
    let t = *y * w;
    *y = *x - t;
    *x += t;
}

#[cfg(test)]
mod tests {
    use super::*;
    use ff::PrimeField;
    use rand::SeedableRng;

    fn random(n: usize, rng: &mut impl rand_core::RngCore) -> Vec<Scalar> {
        (0..n).map(|_| Scalar::random(&mut *rng)).collect()
    }

    /// The definition: A[k] = Σ a_j ω^(jk).
    fn naive_dft(a: &[Scalar], omega: Scalar) -> Vec<Scalar> {
        let n = a.len();
        (0..n).map(|k| evaluate(a, omega.pow_vartime([k as u64]))).collect()
    }

    #[test]
    fn fft_matches_definition() {
        let mut rng = rand_chacha::ChaCha20Rng::from_entropy();
        for log_n in 0..=7 {
            let d = Domain::new(log_n).unwrap();
            let a = random(d.size(), &mut rng);
            let mut got = a.clone();
            fft(&d, &mut got).unwrap();
            assert_eq!(got, naive_dft(&a, d.omega()), "fft log_n {log_n}");
            let mut got = a.clone();
            ifft(&d, &mut got).unwrap();
            let want: Vec<Scalar> = naive_dft(&a, d.omega_inv()).into_iter().map(|v| v * d.size_inv()).collect();
            assert_eq!(got, want, "ifft log_n {log_n}");
            let mut got = a.clone();
            coset_fft(&d, &mut got).unwrap();
            let want: Vec<Scalar> =
                (0..d.size()).map(|k| evaluate(&a, d.generator() * d.omega().pow_vartime([k as u64]))).collect();
            assert_eq!(got, want, "coset_fft log_n {log_n}");
        }
        let _ = Scalar::S;
    }

    #[test]
    fn wrong_lengths_are_errors() {
        let d = Domain::new(3).unwrap();
        let mut a = vec![Scalar::ZERO; 7];
        assert!(matches!(fft(&d, &mut a), Err(NttError::LengthMismatch { expected: 8, got: 7, .. })));
        assert!(matches!(icoset_fft(&d, &mut a), Err(NttError::LengthMismatch { .. })));
        let r = h_poly(&d, vec![Scalar::ONE; 9], vec![], vec![]);
        assert!(matches!(r, Err(NttError::InputTooLong { len: 9, size: 8, .. })), "{r:?}");
    }

    #[test]
    fn evaluate_matches_plain_horner() {
        let mut rng = rand_chacha::ChaCha20Rng::from_entropy();
        let a = random((1 << 16) * 3 + 17, &mut rng);
        let x = Scalar::random(&mut rng);
        let want = a.iter().rev().fold(Scalar::ZERO, |acc, v| acc * x + v);
        assert_eq!(evaluate(&a, x), want);
    }
}
