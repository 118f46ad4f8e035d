//! Groth16 verification: one proof, or a batch checked with one random linear combination.

use blstrs::{Bls12, G1Affine, G1Projective, G2Prepared, Gt, Scalar};
use ff::{Field, PrimeField};
use group::{Curve, Group};
use pairing::{MillerLoopResult, MultiMillerLoop};
use rand_core::RngCore;

use crate::error::VerifyError;
use crate::params::VerifyingKey;
use crate::proof::Proof;

/// A verifying key with its pairing-side work done once.
#[derive(Debug, Clone)]
pub struct PreparedVerifyingKey {
    /// e(α, β).
    alpha_g1_beta_g2: Gt,
    /// −γ, prepared.
    neg_gamma_g2: G2Prepared,
    /// −δ, prepared.
    neg_delta_g2: G2Prepared,
    /// β, prepared (batch verification).
    beta_g2: G2Prepared,
    alpha_g1: G1Affine,
    ic: Vec<G1Affine>,
}

impl PreparedVerifyingKey {
    /// Prepares `vk`.
    pub fn new(vk: &VerifyingKey) -> Self {
        PreparedVerifyingKey {
            alpha_g1_beta_g2: blstrs::pairing(&vk.alpha_g1, &vk.beta_g2),
            neg_gamma_g2: G2Prepared::from(-vk.gamma_g2),
            neg_delta_g2: G2Prepared::from(-vk.delta_g2),
            beta_g2: G2Prepared::from(vk.beta_g2),
            alpha_g1: vk.alpha_g1,
            ic: vk.ic.clone(),
        }
    }

    /// Public inputs a proof takes (not counting ONE).
    pub fn num_public_inputs(&self) -> usize {
        self.ic.len().saturating_sub(1)
    }

    /// IC_0 + Σ x_i·IC_{i+1}, the sum as one multi-scalar multiplication: a Filecoin
    /// partition has 327 inputs, and one scalar multiplication each made verification most
    /// of a proof's CPU time after the GPU sums.
    fn input_term(&self, inputs: &[Scalar]) -> Result<G1Projective, VerifyError> {
        if inputs.len() + 1 != self.ic.len() {
            return Err(VerifyError::InputCount { expected: self.num_public_inputs(), got: inputs.len() });
        }
        let sum =
            kiln_msm::cpu::msm_g1(&self.ic[1..], inputs).unwrap_or_else(|e| unreachable!("lengths checked above: {e}"));
        Ok(sum + self.ic[0])
    }
}

/// Checks e(A, B) = e(α, β)·e(IC(x), γ)·e(C, δ). `Ok(false)`: the proof is wrong for these
/// inputs; `Err`: the call itself is malformed (wrong number of inputs).
pub fn verify_proof(pvk: &PreparedVerifyingKey, proof: &Proof, inputs: &[Scalar]) -> Result<bool, VerifyError> {
    let acc = pvk.input_term(inputs)?.to_affine();
    let b = G2Prepared::from(proof.b);
    let ml = Bls12::multi_miller_loop(&[(&proof.a, &b), (&acc, &pvk.neg_gamma_g2), (&proof.c, &pvk.neg_delta_g2)]);
    Ok(ml.final_exponentiation() == pvk.alpha_g1_beta_g2)
}

/// Verifies many proofs at once: with random z_i, checks
/// Π e(z_i·A_i, B_i) · e(Σ z_i·IC(x_i), −γ) · e(Σ z_i·C_i, −δ) · e(−(Σ z_i)·α, β) = 1.
/// One final exponentiation for the whole batch. `Ok(false)` if any proof is wrong (which one
/// is not said: verify singly to find it).
pub fn verify_proofs_batch<R: RngCore>(
    pvk: &PreparedVerifyingKey,
    proofs: &[Proof],
    inputs: &[Vec<Scalar>],
    rng: &mut R,
) -> Result<bool, VerifyError> {
    if proofs.len() != inputs.len() {
        return Err(VerifyError::BatchLength { proofs: proofs.len(), inputs: inputs.len() });
    }
    if proofs.is_empty() {
        return Ok(true);
    }
    let mut acc_ic = G1Projective::identity();
    let mut acc_c = G1Projective::identity();
    let mut z_sum = Scalar::ZERO;
    let mut a_terms = Vec::with_capacity(proofs.len());
    let mut b_prep = Vec::with_capacity(proofs.len());
    for (proof, x) in proofs.iter().zip(inputs) {
        // 128-bit random multipliers suffice for soundness (error 2^-128) and halve the cost.
        let z = Scalar::from_u128(((rng.next_u64() as u128) << 64) | rng.next_u64() as u128 | 1);
        acc_ic += pvk.input_term(x)? * z;
        acc_c += G1Projective::from(proof.c) * z;
        z_sum += z;
        a_terms.push((G1Projective::from(proof.a) * z).to_affine());
        b_prep.push(G2Prepared::from(proof.b));
    }
    let acc_ic = acc_ic.to_affine();
    let acc_c = acc_c.to_affine();
    let neg_alpha = (G1Projective::from(pvk.alpha_g1) * (-z_sum)).to_affine();
    let mut terms: Vec<(&G1Affine, &G2Prepared)> = a_terms.iter().zip(&b_prep).collect();
    terms.push((&acc_ic, &pvk.neg_gamma_g2));
    terms.push((&acc_c, &pvk.neg_delta_g2));
    terms.push((&neg_alpha, &pvk.beta_g2));
    Ok(Bls12::multi_miller_loop(&terms).final_exponentiation() == Gt::identity())
}

/// Convenience: prepares `vk` and verifies one proof.
pub fn verify(vk: &VerifyingKey, proof: &Proof, inputs: &[Scalar]) -> Result<bool, VerifyError> {
    verify_proof(&PreparedVerifyingKey::new(vk), proof, inputs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use blstrs::G2Affine;
    use group::prime::PrimeCurveAffine;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha20Rng;

    /// The input term as one MSM equals the sum of the products, with the edge cases a
    /// verifying key and its inputs can hold: IC points at infinity (an input used by no
    /// constraint), zero and one inputs, repeated points.
    #[test]
    fn input_term_equals_the_sum_of_products() {
        let seed: u64 = rand::thread_rng().r#gen();
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        for n in [0usize, 1, 2, 7, 64, 327] {
            let mut ic: Vec<G1Affine> = (0..=n).map(|_| G1Projective::random(&mut rng).to_affine()).collect();
            let inputs: Vec<Scalar> = (0..n)
                .map(|i| match i % 5 {
                    0 => Scalar::ZERO,
                    1 => Scalar::ONE,
                    _ => Scalar::random(&mut rng),
                })
                .collect();
            if n >= 7 {
                ic[3] = G1Affine::identity();
                ic[5] = ic[4];
            }
            let g2 = G2Affine::generator();
            let vk = VerifyingKey {
                alpha_g1: G1Affine::generator(),
                beta_g1: G1Affine::generator(),
                beta_g2: g2,
                gamma_g2: g2,
                delta_g1: G1Affine::generator(),
                delta_g2: g2,
                ic: ic.clone(),
            };
            let pvk = PreparedVerifyingKey::new(&vk);
            let mut expected = G1Projective::from(ic[0]);
            for (x, p) in inputs.iter().zip(&ic[1..]) {
                expected += G1Projective::from(p) * x;
            }
            assert_eq!(pvk.input_term(&inputs).unwrap(), expected, "{n} inputs, seed {seed}");
            if n > 0 {
                assert!(matches!(pvk.input_term(&inputs[1..]), Err(VerifyError::InputCount { .. })));
            }
        }
    }
}
