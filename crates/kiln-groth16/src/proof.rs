//! Groth16 proofs in bellperson's byte format: A (G1), B (G2), C (G1), compressed, 192 bytes.

use blstrs::{G1Affine, G2Affine};
use group::prime::PrimeCurveAffine;

use crate::error::{PointFault, ProofError};

/// Bytes of one encoded proof.
pub const PROOF_BYTES: usize = 48 + 96 + 48;

/// A Groth16 proof.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Proof {
    /// A in G1.
    pub a: G1Affine,
    /// B in G2.
    pub b: G2Affine,
    /// C in G1.
    pub c: G1Affine,
}

impl Proof {
    /// The 192-byte encoding (identical to bellperson's `Proof::write`).
    pub fn to_bytes(&self) -> [u8; PROOF_BYTES] {
        let mut out = [0u8; PROOF_BYTES];
        out[..48].copy_from_slice(&self.a.to_compressed());
        out[48..144].copy_from_slice(&self.b.to_compressed());
        out[144..].copy_from_slice(&self.c.to_compressed());
        out
    }

    /// Decodes one proof; every point must be on the curve, in the subgroup and not infinity
    /// (as bellperson's `Proof::read`).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, ProofError> {
        let mut v = Self::read_many(bytes, 1)?;
        Ok(v.remove(0))
    }

    /// Decodes `count` concatenated proofs.
    pub fn read_many(bytes: &[u8], count: usize) -> Result<Vec<Self>, ProofError> {
        let expected = count.saturating_mul(PROOF_BYTES);
        if bytes.len() != expected {
            return Err(ProofError::Length { expected, got: bytes.len() });
        }
        bytes
            .chunks_exact(PROOF_BYTES)
            .enumerate()
            .map(|(proof, p)| {
                let bad = |element, fault| ProofError::BadPoint { proof, element, fault };
                let a = g1(&p[..48]).map_err(|f| bad("a", f))?;
                let b = g2(&p[48..144]).map_err(|f| bad("b", f))?;
                let c = g1(&p[144..]).map_err(|f| bad("c", f))?;
                Ok(Proof { a, b, c })
            })
            .collect()
    }
}

fn g1(bytes: &[u8]) -> Result<G1Affine, PointFault> {
    let arr: &[u8; 48] = bytes.try_into().map_err(|_| PointFault::NotOnCurve)?;
    let p = Option::<G1Affine>::from(G1Affine::from_compressed_unchecked(arr)).ok_or(PointFault::NotOnCurve)?;
    if bool::from(p.is_identity()) {
        return Err(PointFault::Infinity);
    }
    if !bool::from(p.is_torsion_free()) {
        return Err(PointFault::NotInSubgroup);
    }
    Ok(p)
}

fn g2(bytes: &[u8]) -> Result<G2Affine, PointFault> {
    let arr: &[u8; 96] = bytes.try_into().map_err(|_| PointFault::NotOnCurve)?;
    let p = Option::<G2Affine>::from(G2Affine::from_compressed_unchecked(arr)).ok_or(PointFault::NotOnCurve)?;
    if bool::from(p.is_identity()) {
        return Err(PointFault::Infinity);
    }
    if !bool::from(p.is_torsion_free()) {
        return Err(PointFault::NotInSubgroup);
    }
    Ok(p)
}
