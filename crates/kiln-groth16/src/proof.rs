//! Groth16 proofs in bellperson's byte format: A (G1), B (G2), C (G1), compressed, 192 bytes.

use std::io::Read;

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
        decode(bytes, 0)
    }

    /// Reads exactly `count` proofs from `reader` and checks that nothing follows. At most
    /// `count · 192 + 1` bytes are read, whatever the stream holds (`/dev/zero` included).
    pub fn read_from<R: Read>(reader: R, count: usize) -> Result<Vec<Self>, ProofError> {
        ProofReader::new(reader, count).next_chunk(count)
    }
}

/// Reads a known number of concatenated proofs from a stream, a chunk at a time, so that
/// memory is bounded by the chunk the caller asks for rather than by the stream. After the
/// last proof it reads one more byte to check that the stream ends there.
#[derive(Debug)]
pub struct ProofReader<R> {
    inner: R,
    count: usize,
    done: usize,
    /// Whether the byte after the last proof was looked for.
    end_checked: bool,
}

impl<R: Read> ProofReader<R> {
    /// A reader of `count` proofs from `inner`.
    pub fn new(inner: R, count: usize) -> Self {
        ProofReader { inner, count, done: 0, end_checked: false }
    }

    /// The next up to `max` proofs (at least one while any remain and `max > 0`); empty once
    /// all `count` proofs were read (or when `max` is 0). Reading the last proof also checks that the stream ends:
    /// [`ProofError::TooLong`] otherwise. A stream that ends early is [`ProofError::Length`].
    pub fn next_chunk(&mut self, max: usize) -> Result<Vec<Proof>, ProofError> {
        let n = max.min(self.count - self.done);
        let mut proofs = Vec::new();
        if n > 0 {
            // Sized by the caller's count and chunk, never by the stream.
            let mut buf = vec![0u8; n * PROOF_BYTES];
            let got = read_full(&mut self.inner, &mut buf)?;
            if got < buf.len() {
                let expected = self.count.saturating_mul(PROOF_BYTES);
                return Err(ProofError::Length { expected, got: self.done * PROOF_BYTES + got });
            }
            proofs = decode(&buf, self.done)?;
            self.done += n;
        }
        if self.done == self.count && !self.end_checked {
            self.end_checked = true;
            if read_full(&mut self.inner, &mut [0u8; 1])? != 0 {
                return Err(ProofError::TooLong {
                    count: self.count,
                    expected: self.count.saturating_mul(PROOF_BYTES),
                });
            }
        }
        Ok(proofs)
    }
}

/// Fills `buf` from `r` until it is full or the stream ends; returns the bytes read.
fn read_full<R: Read>(r: &mut R, buf: &mut [u8]) -> Result<usize, ProofError> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(k) => got += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(ProofError::Io(e)),
        }
    }
    Ok(got)
}

/// Decodes whole proofs from `bytes`; errors number proofs from `first`.
fn decode(bytes: &[u8], first: usize) -> Result<Vec<Proof>, ProofError> {
    bytes
        .chunks_exact(PROOF_BYTES)
        .enumerate()
        .map(|(i, p)| {
            let bad = |element, fault| ProofError::BadPoint { proof: first + i, element, fault };
            let a = g1(&p[..48]).map_err(|f| bad("a", f))?;
            let b = g2(&p[48..144]).map_err(|f| bad("b", f))?;
            let c = g1(&p[144..]).map_err(|f| bad("c", f))?;
            Ok(Proof { a, b, c })
        })
        .collect()
}

/// Proof points are compressed: without 0x80 on the first byte the bytes are not a proof
/// point (blst would say only "bad encoding"; this names the flag, as the parameter reader
/// names the flags it refuses).
fn compressed_flag(first: u8) -> Result<(), PointFault> {
    if first & 0x80 == 0 { Err(PointFault::NotCompressed) } else { Ok(()) }
}

fn g1(bytes: &[u8]) -> Result<G1Affine, PointFault> {
    let arr: &[u8; 48] = bytes.try_into().map_err(|_| PointFault::NotOnCurve)?;
    compressed_flag(arr[0])?;
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
    compressed_flag(arr[0])?;
    let p = Option::<G2Affine>::from(G2Affine::from_compressed_unchecked(arr)).ok_or(PointFault::NotOnCurve)?;
    if bool::from(p.is_identity()) {
        return Err(PointFault::Infinity);
    }
    if !bool::from(p.is_torsion_free()) {
        return Err(PointFault::NotInSubgroup);
    }
    Ok(p)
}
