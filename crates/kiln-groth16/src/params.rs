//! Groth16 parameters in bellperson's file format.
//!
//! Layout (all points uncompressed, G1 = 96 bytes, G2 = 192 bytes, lengths big-endian u32):
//!
//! ```text
//! vk:  alpha_g1 beta_g1 beta_g2 gamma_g2 delta_g1 delta_g2 | len(ic) ic[..]
//! then len(h) h[..] | len(l) l[..] | len(a) a[..] | len(b_g1) b_g1[..] | len(b_g2) b_g2[..]
//! ```
//!
//! Reading maps the file and decodes the points straight from the mapping, in parallel; a
//! length field is trusted only after checking that the rest of the file can hold that many
//! points, so a corrupt length never causes a large allocation.

use std::io::Write;
use std::path::Path;

use blstrs::{G1Affine, G2Affine};
use group::prime::PrimeCurveAffine;
use rayon::prelude::*;

use crate::error::{ParamsError, PointFault, WriteError};

/// Bytes of an uncompressed G1 point.
pub const G1_BYTES: usize = 96;
/// Bytes of an uncompressed G2 point.
pub const G2_BYTES: usize = 192;

/// How thoroughly points are validated when reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// Every point: valid encoding on the curve, in the prime-order subgroup, not infinity.
    /// The subgroup check dominates; it runs in parallel.
    Full,
    /// Encoding and on-curve (blst checks that while decoding) and not infinity; no subgroup
    /// check. For files you wrote yourself.
    NoSubgroup,
}

/// The verifying key (bellperson's `VerifyingKey` layout).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyingKey {
    /// α in G1.
    pub alpha_g1: G1Affine,
    /// β in G1.
    pub beta_g1: G1Affine,
    /// β in G2.
    pub beta_g2: G2Affine,
    /// γ in G2.
    pub gamma_g2: G2Affine,
    /// δ in G1.
    pub delta_g1: G1Affine,
    /// δ in G2.
    pub delta_g2: G2Affine,
    /// (β·u_i(τ) + α·v_i(τ) + w_i(τ)) / γ for each public input, ONE first.
    pub ic: Vec<G1Affine>,
}

/// The proving parameters: verifying key and the five queries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parameters {
    /// The verifying key.
    pub vk: VerifyingKey,
    /// τ^i · t(τ) / δ for i in 0..domain−1.
    pub h: Vec<G1Affine>,
    /// (β·u_i(τ) + α·v_i(τ) + w_i(τ)) / δ for each aux variable.
    pub l: Vec<G1Affine>,
    /// u_i(τ) for each variable whose A polynomial is non-zero (inputs first, then aux).
    pub a: Vec<G1Affine>,
    /// v_i(τ) in G1 for each variable whose B polynomial is non-zero.
    pub b_g1: Vec<G1Affine>,
    /// v_i(τ) in G2 for each variable whose B polynomial is non-zero.
    pub b_g2: Vec<G2Affine>,
}

/// A point type of the file format.
trait FilePoint: Sized + Send + PrimeCurveAffine {
    const BYTES: usize;
    fn decode(bytes: &[u8], check: Check) -> Result<Self, PointFault>;
    fn encode(&self) -> Vec<u8>;
}

/// Rejects the flag bits that have no meaning in an uncompressed encoding. In the zcash
/// serialization format (bellperson's) the compression flag 0x80 and the sort flag 0x20 belong
/// to the compressed form only; an uncompressed encoding with either set is malformed (the
/// zkcrypto `bls12_381` crate's `from_uncompressed` refuses it too). blst's `*_deserialize`
/// (behind blstrs' `from_uncompressed*`) is laxer: it reads a first byte with 0x80 as a
/// compressed point, ignoring the other half of the bytes, and clears 0x20 silently. Either
/// way the point read is not the one the bytes spell out, and a proof made from it does not
/// verify, so the flags are refused here in every [`Check`] mode. The infinity flag (0x40) is
/// left to blst: with any other bit set it is a bad encoding, alone it is the point at
/// infinity, rejected by the callers.
fn uncompressed_flags(first: u8) -> Result<(), PointFault> {
    if first & 0x80 != 0 {
        Err(PointFault::CompressionFlag)
    } else if first & 0x20 != 0 {
        Err(PointFault::SortFlag)
    } else {
        Ok(())
    }
}

impl FilePoint for G1Affine {
    const BYTES: usize = G1_BYTES;
    fn decode(bytes: &[u8], check: Check) -> Result<Self, PointFault> {
        let arr: &[u8; G1_BYTES] = bytes.try_into().map_err(|_| PointFault::NotOnCurve)?;
        uncompressed_flags(arr[0])?;
        // blst's deserialisation already rejects points off the curve.
        let p = Option::<G1Affine>::from(G1Affine::from_uncompressed_unchecked(arr)).ok_or(PointFault::NotOnCurve)?;
        if bool::from(p.is_identity()) {
            return Err(PointFault::Infinity);
        }
        if !bool::from(p.is_on_curve()) {
            return Err(PointFault::NotOnCurve);
        }
        if check == Check::Full && !bool::from(p.is_torsion_free()) {
            return Err(PointFault::NotInSubgroup);
        }
        Ok(p)
    }
    fn encode(&self) -> Vec<u8> {
        self.to_uncompressed().to_vec()
    }
}

impl FilePoint for G2Affine {
    const BYTES: usize = G2_BYTES;
    fn decode(bytes: &[u8], check: Check) -> Result<Self, PointFault> {
        let arr: &[u8; G2_BYTES] = bytes.try_into().map_err(|_| PointFault::NotOnCurve)?;
        uncompressed_flags(arr[0])?;
        let p = Option::<G2Affine>::from(G2Affine::from_uncompressed_unchecked(arr)).ok_or(PointFault::NotOnCurve)?;
        if bool::from(p.is_identity()) {
            return Err(PointFault::Infinity);
        }
        if !bool::from(p.is_on_curve()) {
            return Err(PointFault::NotOnCurve);
        }
        if check == Check::Full && !bool::from(p.is_torsion_free()) {
            return Err(PointFault::NotInSubgroup);
        }
        Ok(p)
    }
    fn encode(&self) -> Vec<u8> {
        self.to_uncompressed().to_vec()
    }
}

/// A read position in a byte slice that names what it reads in its errors.
struct Reader<'a> {
    bytes: &'a [u8],
    offset: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, section: &'static str, index: usize, n: usize) -> Result<&'a [u8], ParamsError> {
        let available = self.bytes.len() - self.offset;
        if available < n {
            return Err(ParamsError::Truncated { section, index, offset: self.offset, needed: n, available });
        }
        let s = &self.bytes[self.offset..self.offset + n];
        self.offset += n;
        Ok(s)
    }

    fn point<P: FilePoint>(&mut self, section: &'static str, check: Check) -> Result<P, ParamsError> {
        let offset = self.offset;
        let raw = self.take(section, 0, P::BYTES)?;
        P::decode(raw, check).map_err(|fault| ParamsError::BadPoint { section, index: 0, offset, fault })
    }

    /// A length-prefixed section, decoded in parallel. The length is checked against the bytes
    /// left before anything is allocated.
    fn section<P: FilePoint>(&mut self, section: &'static str, check: Check) -> Result<Vec<P>, ParamsError> {
        let len_offset = self.offset;
        let raw = self.take(section, 0, 4)?;
        let count = u32::from_be_bytes([raw[0], raw[1], raw[2], raw[3]]) as u64;
        let bytes = count * P::BYTES as u64;
        let available = self.bytes.len() - self.offset;
        if bytes > available as u64 {
            return Err(ParamsError::SectionLength { section, offset: len_offset, count, bytes, available });
        }
        let start = self.offset;
        let body = self.take(section, 0, bytes as usize)?;
        body.par_chunks_exact(P::BYTES)
            .enumerate()
            .map(|(index, raw)| {
                P::decode(raw, check).map_err(|fault| ParamsError::BadPoint {
                    section,
                    index,
                    offset: start + index * P::BYTES,
                    fault,
                })
            })
            .collect()
    }
}

fn write_section<W: Write, P: FilePoint + Sync>(w: &mut W, points: &[P]) -> std::io::Result<()> {
    let len = u32::try_from(points.len())
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidInput, "section longer than 2^32-1 points"))?;
    w.write_all(&len.to_be_bytes())?;
    // Encode in parallel chunks, write in order.
    for chunk in points.chunks(1 << 14) {
        let buf: Vec<u8> = chunk.par_iter().flat_map_iter(|p| p.encode()).collect();
        w.write_all(&buf)?;
    }
    Ok(())
}

impl VerifyingKey {
    fn read_from(r: &mut Reader<'_>) -> Result<Self, ParamsError> {
        // The verifying key is small: always validated fully.
        let c = Check::Full;
        Ok(VerifyingKey {
            alpha_g1: r.point("vk.alpha_g1", c)?,
            beta_g1: r.point("vk.beta_g1", c)?,
            beta_g2: r.point("vk.beta_g2", c)?,
            gamma_g2: r.point("vk.gamma_g2", c)?,
            delta_g1: r.point("vk.delta_g1", c)?,
            delta_g2: r.point("vk.delta_g2", c)?,
            ic: r.section("vk.ic", c)?,
        })
    }

    /// Decodes a verifying key that fills `bytes` exactly (bellperson's `VerifyingKey::write` output).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, ParamsError> {
        let mut r = Reader { bytes, offset: 0 };
        let vk = Self::read_from(&mut r)?;
        if r.offset != bytes.len() {
            return Err(ParamsError::TrailingBytes { offset: r.offset, count: bytes.len() - r.offset });
        }
        Ok(vk)
    }

    /// Writes the verifying key in bellperson's layout.
    pub fn write<W: Write>(&self, mut w: W) -> std::io::Result<()> {
        w.write_all(&self.alpha_g1.to_uncompressed())?;
        w.write_all(&self.beta_g1.to_uncompressed())?;
        w.write_all(&self.beta_g2.to_uncompressed())?;
        w.write_all(&self.gamma_g2.to_uncompressed())?;
        w.write_all(&self.delta_g1.to_uncompressed())?;
        w.write_all(&self.delta_g2.to_uncompressed())?;
        write_section(&mut w, &self.ic)
    }

    /// The encoded verifying key.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut v = Vec::new();
        self.write(&mut v).expect("writing to a Vec cannot fail");
        v
    }

    /// Number of public inputs a proof for this key takes (not counting the constant ONE).
    pub fn num_public_inputs(&self) -> usize {
        self.ic.len().saturating_sub(1)
    }
}

impl Parameters {
    /// Host bytes its point vectors hold (the verifying key's included): what the parameters
    /// take in memory, for host memory plans and reports.
    pub fn heap_bytes(&self) -> u64 {
        let g1 = std::mem::size_of::<G1Affine>() as u64;
        let g2 = std::mem::size_of::<G2Affine>() as u64;
        let g1_points = self.vk.ic.len() + self.h.len() + self.l.len() + self.a.len() + self.b_g1.len();
        g1_points as u64 * g1 + self.b_g2.len() as u64 * g2
    }

    /// Decodes parameters that fill `bytes` exactly.
    pub fn from_bytes(bytes: &[u8], check: Check) -> Result<Self, ParamsError> {
        let mut r = Reader { bytes, offset: 0 };
        let vk = VerifyingKey::read_from(&mut r)?;
        let params = Parameters {
            vk,
            h: r.section("h", check)?,
            l: r.section("l", check)?,
            a: r.section("a", check)?,
            b_g1: r.section("b_g1", check)?,
            b_g2: r.section("b_g2", check)?,
        };
        if r.offset != bytes.len() {
            return Err(ParamsError::TrailingBytes { offset: r.offset, count: bytes.len() - r.offset });
        }
        Ok(params)
    }

    /// Reads a parameter file through a memory map: the points are decoded straight from the
    /// mapping (no intermediate copy of the file).
    ///
    /// Only regular files (or symlinks to them) are read: a directory, a FIFO, a pipe or a
    /// device gives [`ParamsError::NotRegular`], decided from the path's metadata before it is
    /// opened, so that a FIFO without a writer cannot block the call.
    pub fn read(path: &Path, check: Check) -> Result<Self, ParamsError> {
        let io = |op| move |source| ParamsError::Io { path: path.to_path_buf(), op, source };
        let not_regular = |what| ParamsError::NotRegular { path: path.to_path_buf(), what };
        let meta = std::fs::metadata(path).map_err(io("stat"))?;
        if !meta.is_file() {
            return Err(not_regular(crate::atomic::file_kind(&meta.file_type())));
        }
        let file = std::fs::File::open(path).map_err(io("open"))?;
        // Checked again on what was opened: the path may have been replaced in between.
        let meta = file.metadata().map_err(io("stat"))?;
        if !meta.is_file() {
            return Err(not_regular(crate::atomic::file_kind(&meta.file_type())));
        }
        if meta.len() == 0 {
            return Self::from_bytes(&[], check);
        }
        // SAFETY: the mapping is read-only and lives only inside this function. A concurrent
        // writer truncating the file could fault the process; kiln writes parameter files by
        // atomic rename, so a file it reads is never modified in place.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io("map"))?;
        Self::from_bytes(&map, check)
    }

    /// Writes the parameters in bellperson's layout.
    pub fn write<W: Write>(&self, mut w: W) -> std::io::Result<()> {
        self.vk.write(&mut w)?;
        write_section(&mut w, &self.h)?;
        write_section(&mut w, &self.l)?;
        write_section(&mut w, &self.a)?;
        write_section(&mut w, &self.b_g1)?;
        write_section(&mut w, &self.b_g2)
    }

    /// Writes the parameters to `path` atomically (temporary file, fsync, rename); `path` must
    /// be a new path or a regular file (see [`crate::atomic`]).
    pub fn write_file(&self, path: &Path) -> Result<(), WriteError> {
        crate::atomic::write_atomic(path, &[], |w| self.write(w))
    }

    /// The encoded parameters.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(self.file_size());
        self.write(&mut v).expect("writing to a Vec cannot fail");
        v
    }

    /// Size of the encoded parameters in bytes.
    pub fn file_size(&self) -> usize {
        3 * G1_BYTES
            + 3 * G2_BYTES
            + 6 * 4
            + G1_BYTES * (self.vk.ic.len() + self.h.len() + self.l.len() + self.a.len() + self.b_g1.len())
            + G2_BYTES * self.b_g2.len()
    }
}
