//! The 0 / 1 / other split of a scalar vector (ARCHITECTURE.md §3 step 2).
//!
//! Filecoin-class circuits have aux values that are mostly 0 or 1. A sum over such a
//! vector is then `Σ_{k_i = 1} P_i` (batch addition, no scalar work) plus an MSM over
//! the compacted "other" tail. One split is shared by every sum over the same scalars
//! (A, B_G1, B_G2, L).

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::Field;
use group::Group;
use rayon::prelude::*;

use crate::{Density, MsmError};

/// The classification of `n` scalars: bitmaps of zeros and ones, and the indices (ascending)
/// of every other scalar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScalarSplit {
    /// Bit `i` set: `scalars[i] == 0`.
    pub zeros: Density,
    /// Bit `i` set: `scalars[i] == 1`.
    pub ones: Density,
    /// Indices `i` with `scalars[i] ∉ {0, 1}`, ascending.
    pub others: Vec<u32>,
}

impl ScalarSplit {
    /// Classifies `scalars` (in parallel).
    ///
    /// # Errors
    /// [`MsmError::InvalidArgument`] when there are more than `u32::MAX` scalars.
    pub fn classify(scalars: &[Scalar]) -> Result<Self, MsmError> {
        if u32::try_from(scalars.len()).is_err() {
            return Err(MsmError::InvalidArgument(format!("split: {} scalars exceed u32 indices", scalars.len())));
        }
        // 0 = zero, 1 = one, 2 = other.
        let class: Vec<u8> = scalars
            .par_iter()
            .map(|s| {
                if bool::from(s.is_zero()) {
                    0
                } else if *s == Scalar::ONE {
                    1
                } else {
                    2
                }
            })
            .collect();
        let zeros = class.iter().map(|&c| c == 0).collect();
        let ones = class.iter().map(|&c| c == 1).collect();
        let others = class.iter().enumerate().filter(|(_, c)| **c == 2).map(|(i, _)| i as u32).collect();
        Ok(ScalarSplit { zeros, ones, others })
    }

    /// Number of scalars classified.
    pub fn len(&self) -> usize {
        self.zeros.len()
    }

    /// Whether no scalar was classified.
    pub fn is_empty(&self) -> bool {
        self.zeros.is_empty()
    }

    /// The "other" scalars, compacted in index order.
    pub fn other_scalars(&self, scalars: &[Scalar]) -> Vec<Scalar> {
        self.others.iter().map(|&i| scalars[i as usize]).collect()
    }

    fn check(&self, bases: usize, scalars: usize) -> Result<(), MsmError> {
        if bases != self.len() || scalars != self.len() {
            return Err(MsmError::InvalidArgument(format!(
                "split of {} scalars used with {bases} bases and {scalars} scalars",
                self.len()
            )));
        }
        Ok(())
    }
}

/// `Σ scalars[i] · bases[i]` in G1 through the split: batch sum of the ones + MSM of the tail.
pub fn msm_g1_split(bases: &[G1Affine], scalars: &[Scalar], split: &ScalarSplit) -> Result<G1Projective, MsmError> {
    split.check(bases.len(), scalars.len())?;
    let ones: G1Projective = split
        .ones
        .iter_ones()
        .collect::<Vec<_>>()
        .par_iter()
        .fold(G1Projective::identity, |acc, &i| acc + bases[i])
        .reduce(G1Projective::identity, |a, b| a + b);
    let tail_bases: Vec<G1Affine> = split.others.iter().map(|&i| bases[i as usize]).collect();
    Ok(ones + crate::cpu::msm_g1(&tail_bases, &split.other_scalars(scalars))?)
}

/// `Σ scalars[i] · bases[i]` in G2 through the split.
pub fn msm_g2_split(bases: &[G2Affine], scalars: &[Scalar], split: &ScalarSplit) -> Result<G2Projective, MsmError> {
    split.check(bases.len(), scalars.len())?;
    let ones: G2Projective = split
        .ones
        .iter_ones()
        .collect::<Vec<_>>()
        .par_iter()
        .fold(G2Projective::identity, |acc, &i| acc + bases[i])
        .reduce(G2Projective::identity, |a, b| a + b);
    let tail_bases: Vec<G2Affine> = split.others.iter().map(|&i| bases[i as usize]).collect();
    Ok(ones + crate::cpu::msm_g2(&tail_bases, &split.other_scalars(scalars))?)
}

#[cfg(test)]
mod tests {
    use group::Curve;
    use rand::Rng;

    use super::*;

    #[test]
    fn split_sum_equals_plain_msm() {
        let mut rng = rand::thread_rng();
        let n = 1000;
        let scalars: Vec<Scalar> = (0..n)
            .map(|_| match rng.gen_range(0..100) {
                0..51 => Scalar::ZERO,
                51..98 => Scalar::ONE,
                _ => Scalar::random(&mut rng),
            })
            .collect();
        let split = ScalarSplit::classify(&scalars).unwrap();
        assert_eq!(split.zeros.count_ones() + split.ones.count_ones() + split.others.len(), n);
        for (i, s) in scalars.iter().enumerate() {
            assert_eq!(split.zeros.get(i), bool::from(s.is_zero()), "zero bit {i}");
            assert_eq!(split.ones.get(i), *s == Scalar::ONE, "one bit {i}");
        }
        let b1: Vec<G1Affine> = (0..n).map(|_| G1Projective::random(&mut rng).to_affine()).collect();
        let b2: Vec<G2Affine> = (0..n).map(|_| G2Projective::random(&mut rng).to_affine()).collect();
        assert_eq!(msm_g1_split(&b1, &scalars, &split).unwrap(), crate::cpu::msm_g1(&b1, &scalars).unwrap());
        assert_eq!(msm_g2_split(&b2, &scalars, &split).unwrap(), crate::cpu::msm_g2(&b2, &scalars).unwrap());
    }
}
