//! Synthetic base sets with known discrete logs: `P_i = d_i · G` with `d_i = d_0 + i·δ`.
//!
//! Then `Σ k_i · P_i = (Σ k_i · d_i) · G`: one scalar sum on the CPU checks an MSM of any
//! size. Generation is parallel: one scalar multiplication per chunk start, then one
//! addition of `δ·G` per point, batch-normalised to affine per chunk.

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::Field;
use group::prime::PrimeCurveAffine;
use group::{Curve, Group};
use rayon::prelude::*;

/// Points per parallel chunk: large enough to amortise the chunk's scalar multiplication
/// and batch inversion, small enough to keep every core busy.
const CHUNK: usize = 1 << 12;

/// The discrete logs of a generated base set: `d_i = d0 + i·delta`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnownDlog {
    /// `d_0`.
    pub d0: Scalar,
    /// `δ`.
    pub delta: Scalar,
}

impl KnownDlog {
    /// Random `d_0` and `δ`.
    pub fn random(mut rng: impl rand_core::RngCore) -> Self {
        KnownDlog { d0: Scalar::random(&mut rng), delta: Scalar::random(&mut rng) }
    }

    /// `d_i`.
    pub fn dlog(&self, i: usize) -> Scalar {
        self.d0 + self.delta * Scalar::from(i as u64)
    }

    /// `Σ k_i · d_i` (so that `Σ k_i · P_i = that · G`), computed in parallel.
    pub fn weighted_sum(&self, scalars: &[Scalar]) -> Scalar {
        // Σ k_i (d0 + iδ) = d0 Σ k_i + δ Σ i k_i.
        let (sum_k, sum_ik) = scalars
            .par_iter()
            .enumerate()
            .fold(|| (Scalar::ZERO, Scalar::ZERO), |(a, b), (i, k)| (a + k, b + *k * Scalar::from(i as u64)))
            .reduce(|| (Scalar::ZERO, Scalar::ZERO), |(a, b), (c, d)| (a + c, b + d));
        self.d0 * sum_k + self.delta * sum_ik
    }

    /// `n` G1 bases `P_i = d_i · G1`.
    pub fn g1_bases(&self, n: usize) -> Vec<G1Affine> {
        let step = G1Projective::generator() * self.delta;
        let mut out = vec![G1Affine::identity(); n];
        out.par_chunks_mut(CHUNK).enumerate().for_each(|(c, chunk)| {
            let mut p = G1Projective::generator() * self.dlog(c * CHUNK);
            let mut proj = Vec::with_capacity(chunk.len());
            for _ in 0..chunk.len() {
                proj.push(p);
                p += step;
            }
            G1Projective::batch_normalize(&proj, chunk);
        });
        out
    }

    /// `n` G2 bases `Q_i = d_i · G2`.
    pub fn g2_bases(&self, n: usize) -> Vec<G2Affine> {
        let step = G2Projective::generator() * self.delta;
        let mut out = vec![G2Affine::identity(); n];
        out.par_chunks_mut(CHUNK).enumerate().for_each(|(c, chunk)| {
            let mut p = G2Projective::generator() * self.dlog(c * CHUNK);
            let mut proj = Vec::with_capacity(chunk.len());
            for _ in 0..chunk.len() {
                proj.push(p);
                p += step;
            }
            G2Projective::batch_normalize(&proj, chunk);
        });
        out
    }

    /// What a correct G1 MSM of `scalars` over [`Self::g1_bases`] returns.
    pub fn expected_g1(&self, scalars: &[Scalar]) -> G1Projective {
        G1Projective::generator() * self.weighted_sum(scalars)
    }

    /// What a correct G2 MSM of `scalars` over [`Self::g2_bases`] returns.
    pub fn expected_g2(&self, scalars: &[Scalar]) -> G2Projective {
        G2Projective::generator() * self.weighted_sum(scalars)
    }
}

/// Uniformly random scalars, generated in parallel from `seed` (deterministic per seed).
pub fn random_scalars(n: usize, seed: u64) -> Vec<Scalar> {
    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;
    let mut out = vec![Scalar::ZERO; n];
    out.par_chunks_mut(CHUNK).enumerate().for_each(|(c, chunk)| {
        let mut rng = ChaCha20Rng::seed_from_u64(seed ^ (c as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        for s in chunk {
            *s = Scalar::random(&mut rng);
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bases_have_the_stated_logs_and_the_sum_checks() {
        let dl = KnownDlog::random(rand::thread_rng());
        let n = 3 * CHUNK + 5;
        let b1 = dl.g1_bases(n);
        for i in [0, 1, CHUNK - 1, CHUNK, 2 * CHUNK + 7, n - 1] {
            assert_eq!(G1Projective::from(b1[i]), G1Projective::generator() * dl.dlog(i), "G1 base {i}");
        }
        let b2 = dl.g2_bases(CHUNK + 3);
        for i in [0, CHUNK - 1, CHUNK, CHUNK + 2] {
            assert_eq!(G2Projective::from(b2[i]), G2Projective::generator() * dl.dlog(i), "G2 base {i}");
        }
        let k = random_scalars(n, rand::random());
        assert_eq!(crate::cpu::msm_g1(&b1, &k).unwrap(), dl.expected_g1(&k));
        let k2 = &k[..b2.len()];
        assert_eq!(crate::cpu::msm_g2(&b2, k2).unwrap(), dl.expected_g2(k2));
    }
}
