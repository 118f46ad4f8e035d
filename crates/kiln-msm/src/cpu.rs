//! CPU multi-scalar multiplication: blst's affine-input Pippenger, multi-threaded over
//! blst's own thread pool (one thread per core), with bellperson's density masks.
//!
//! This is the reference every GPU result is compared with, and the path that runs
//! where no GPU is present.

use blst::{MultiPoint, blst_p1, blst_p1_affine, blst_p2, blst_p2_affine};
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::Field;
use group::Group;

use crate::{Density, MsmError};

/// Scalars as the little-endian canonical bytes blst's Pippenger reads (32 per scalar).
fn scalar_bytes(scalars: &[Scalar]) -> Vec<u8> {
    use rayon::prelude::*;
    let mut out = vec![0u8; scalars.len() * 32];
    out.par_chunks_mut(32).zip(scalars.par_iter()).for_each(|(o, s)| o.copy_from_slice(&s.to_bytes_le()));
    out
}

fn g1_affine_as_blst(bases: &[G1Affine]) -> &[blst_p1_affine] {
    // SAFETY: `blstrs::G1Affine` is `#[repr(transparent)]` over `blst_p1_affine`, so the
    // slices have identical layout, length and lifetime.
    unsafe { std::slice::from_raw_parts(bases.as_ptr().cast::<blst_p1_affine>(), bases.len()) }
}

fn g2_affine_as_blst(bases: &[G2Affine]) -> &[blst_p2_affine] {
    // SAFETY: `blstrs::G2Affine` is `#[repr(transparent)]` over `blst_p2_affine`.
    unsafe { std::slice::from_raw_parts(bases.as_ptr().cast::<blst_p2_affine>(), bases.len()) }
}

/// blst's Jacobian point as blstrs' (blstrs exports no conversion, and its Fp is private).
fn g1_from_blst(p: blst_p1) -> G1Projective {
    // SAFETY: `G1Projective` is `#[repr(transparent)]` over `blst_p1`, and every blst_p1 blst
    // returns is a valid point.
    unsafe { std::mem::transmute::<blst_p1, G1Projective>(p) }
}

/// The G2 form of [`g1_from_blst`].
fn g2_from_blst(p: blst_p2) -> G2Projective {
    // SAFETY: `G2Projective` is `#[repr(transparent)]` over `blst_p2`.
    unsafe { std::mem::transmute::<blst_p2, G2Projective>(p) }
}

/// `Σ scalars[i] · bases[i]` in G1. Lengths must be equal.
pub fn msm_g1(bases: &[G1Affine], scalars: &[Scalar]) -> Result<G1Projective, MsmError> {
    if bases.len() != scalars.len() {
        return Err(MsmError::LengthMismatch { bases: bases.len(), scalars: scalars.len() });
    }
    if bases.is_empty() {
        return Ok(G1Projective::identity());
    }
    let p = g1_affine_as_blst(bases).mult(&scalar_bytes(scalars), 255);
    Ok(g1_from_blst(p))
}

/// `Σ scalars[i] · bases[i]` in G2. Lengths must be equal.
pub fn msm_g2(bases: &[G2Affine], scalars: &[Scalar]) -> Result<G2Projective, MsmError> {
    if bases.len() != scalars.len() {
        return Err(MsmError::LengthMismatch { bases: bases.len(), scalars: scalars.len() });
    }
    if bases.is_empty() {
        return Ok(G2Projective::identity());
    }
    let p = g2_affine_as_blst(bases).mult(&scalar_bytes(scalars), 255);
    Ok(g2_from_blst(p))
}

/// The scalars of the variables whose density bit is set, in order (bellperson's semantics:
/// `scalars` has one entry per variable, bases one per set bit).
pub fn gather_dense(density: &Density, scalars: &[Scalar], bases: usize) -> Result<Vec<Scalar>, MsmError> {
    let mut dense = vec![Scalar::ZERO; bases];
    density.gather_into(scalars, &mut dense)?;
    Ok(dense)
}

/// `Σ_{i: density bit i set} scalars[i] · bases[rank(i)]` in G1, where `rank(i)` is the number
/// of set bits before `i`. `scalars.len() == density.len()`, `bases.len() == density.count_ones()`.
pub fn msm_g1_with_density(
    bases: &[G1Affine],
    density: &Density,
    scalars: &[Scalar],
) -> Result<G1Projective, MsmError> {
    let s = gather_dense(density, scalars, bases.len())?;
    msm_g1(bases, &s)
}

/// The G2 form of [`msm_g1_with_density`].
pub fn msm_g2_with_density(
    bases: &[G2Affine],
    density: &Density,
    scalars: &[Scalar],
) -> Result<G2Projective, MsmError> {
    let s = gather_dense(density, scalars, bases.len())?;
    msm_g2(bases, &s)
}

#[cfg(test)]
mod tests {
    use ff::Field;
    use group::prime::PrimeCurveAffine;
    use group::{Curve, Group};
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    use super::*;

    fn rng() -> ChaCha20Rng {
        let seed: u64 = rand::random();
        eprintln!("seed {seed}");
        ChaCha20Rng::seed_from_u64(seed)
    }

    fn naive_g1(bases: &[G1Affine], scalars: &[Scalar]) -> G1Projective {
        bases.iter().zip(scalars).map(|(b, s)| G1Projective::from(*b) * s).sum()
    }

    fn naive_g2(bases: &[G2Affine], scalars: &[Scalar]) -> G2Projective {
        bases.iter().zip(scalars).map(|(b, s)| G2Projective::from(*b) * s).sum()
    }

    #[test]
    fn g1_matches_naive_sum() {
        let mut r = rng();
        for n in [0usize, 1, 2, 3, 31, 32, 33, 100, 300] {
            let bases: Vec<G1Affine> = (0..n).map(|_| G1Projective::random(&mut r).to_affine()).collect();
            let mut scalars: Vec<Scalar> = (0..n).map(|_| Scalar::random(&mut r)).collect();
            if n > 3 {
                scalars[0] = Scalar::ZERO;
                scalars[1] = Scalar::ONE;
                scalars[2] = -Scalar::ONE;
            }
            assert_eq!(msm_g1(&bases, &scalars).unwrap(), naive_g1(&bases, &scalars), "n = {n}");
        }
    }

    #[test]
    fn g2_matches_naive_sum() {
        let mut r = rng();
        for n in [0usize, 1, 2, 3, 33, 100] {
            let bases: Vec<G2Affine> = (0..n).map(|_| G2Projective::random(&mut r).to_affine()).collect();
            let mut scalars: Vec<Scalar> = (0..n).map(|_| Scalar::random(&mut r)).collect();
            if n > 3 {
                scalars[0] = Scalar::ZERO;
                scalars[1] = Scalar::ONE;
                scalars[2] = -Scalar::ONE;
            }
            assert_eq!(msm_g2(&bases, &scalars).unwrap(), naive_g2(&bases, &scalars), "n = {n}");
        }
    }

    #[test]
    fn bases_at_infinity_contribute_nothing() {
        let mut r = rng();
        let mut bases: Vec<G1Affine> = (0..64).map(|_| G1Projective::random(&mut r).to_affine()).collect();
        for b in bases.iter_mut().step_by(3) {
            *b = G1Affine::identity();
        }
        let scalars: Vec<Scalar> = (0..64).map(|_| Scalar::random(&mut r)).collect();
        assert_eq!(msm_g1(&bases, &scalars).unwrap(), naive_g1(&bases, &scalars));
    }

    #[test]
    fn density_skips_unset_variables() {
        let mut r = rng();
        let n = 200;
        let density: Density = (0..n).map(|i| (i * 7 + 3) % 5 != 0).collect();
        let m = density.count_ones();
        let bases1: Vec<G1Affine> = (0..m).map(|_| G1Projective::random(&mut r).to_affine()).collect();
        let bases2: Vec<G2Affine> = (0..m).map(|_| G2Projective::random(&mut r).to_affine()).collect();
        let scalars: Vec<Scalar> = (0..n).map(|_| Scalar::random(&mut r)).collect();
        let mut want1 = G1Projective::identity();
        let mut want2 = G2Projective::identity();
        let mut k = 0;
        for (i, s) in scalars.iter().enumerate() {
            if density.get(i) {
                want1 += G1Projective::from(bases1[k]) * s;
                want2 += G2Projective::from(bases2[k]) * s;
                k += 1;
            }
        }
        assert_eq!(msm_g1_with_density(&bases1, &density, &scalars).unwrap(), want1);
        assert_eq!(msm_g2_with_density(&bases2, &density, &scalars).unwrap(), want2);
    }

    #[test]
    fn mismatched_lengths_are_errors() {
        let b = vec![G1Affine::generator(); 3];
        let s = vec![Scalar::ONE; 2];
        assert!(matches!(msm_g1(&b, &s), Err(MsmError::LengthMismatch { bases: 3, scalars: 2 })));
        let d = Density::new(vec![true, false, true]);
        let err = msm_g1_with_density(&b, &d, &[Scalar::ONE; 3]).unwrap_err();
        assert!(err.to_string().contains("density covers 3 variables with 2 set"), "{err}");
    }
}
