//! Base sets on the device and the scalars an MSM reads.

use std::sync::Arc;

use blstrs::{G1Affine, G2Affine, Scalar};
use kiln_cuda::cudarc::driver::{CudaSlice, CudaStream, PinnedHostSlice};
use kiln_cuda::{CudaResultExt, Device, DeviceBuf, DeviceMemory, check_stream};
use kiln_field::DeviceLayout;

use super::Curve;
use crate::MsmError;

/// A base set resident on the device.
pub struct GpuBases {
    pub(crate) buf: DeviceBuf<u64>,
    pub(crate) n: usize,
    pub(crate) curve: Curve,
}

impl std::fmt::Debug for GpuBases {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuBases").field("n", &self.n).field("curve", &self.curve).finish_non_exhaustive()
    }
}

impl GpuBases {
    /// Room for `capacity` bases of `curve` from `mem`, holding none yet: filled by
    /// [`GpuBases::load_g1`] / [`GpuBases::load_g2`] (the streamed SRS reuses one such set per
    /// chunk).
    pub fn with_capacity(
        stream: &Arc<CudaStream>,
        curve: Curve,
        capacity: usize,
        mem: &impl DeviceMemory,
    ) -> Result<Self, MsmError> {
        if capacity >= 1 << 31 {
            return Err(MsmError::InvalidArgument(format!("{capacity} bases: at most 2^31 - 1 supported")));
        }
        let buf = mem.take_poisoned::<u64>(stream, capacity * curve.affine_bytes() / 8, "msm bases")?;
        Ok(GpuBases { buf, n: 0, curve })
    }

    fn load(&mut self, stream: &Arc<CudaStream>, words: &[u64], n: usize, curve: Curve) -> Result<(), MsmError> {
        if curve != self.curve || words.len() > self.buf.len() {
            return Err(MsmError::InvalidArgument(format!(
                "{n} {curve:?} bases into a set of {} {:?} bases",
                self.buf.len() * 8 / self.curve.affine_bytes(),
                self.curve
            )));
        }
        if !words.is_empty() {
            stream.memcpy_htod(words, &mut self.buf.slice_mut(..words.len())).ctx("cuMemcpyHtoDAsync(bases)")?;
        }
        self.n = n;
        Ok(())
    }

    /// Replaces the bases with `bases` (async on `stream`; later work on `stream` sees them).
    pub fn load_g1(&mut self, stream: &Arc<CudaStream>, bases: &[G1Affine]) -> Result<(), MsmError> {
        self.load(stream, G1Affine::as_u64s(bases), bases.len(), Curve::G1)
    }

    /// The G2 form of [`GpuBases::load_g1`].
    pub fn load_g2(&mut self, stream: &Arc<CudaStream>, bases: &[G2Affine]) -> Result<(), MsmError> {
        self.load(stream, G2Affine::as_u64s(bases), bases.len(), Curve::G2)
    }

    /// Uploads G1 bases (infinity = all zeros, as blst) into memory from `mem` and waits.
    pub fn g1(device: &Device, bases: &[G1Affine], mem: &impl DeviceMemory) -> Result<Self, MsmError> {
        let stream = device.new_stream()?;
        let mut set = Self::with_capacity(&stream, Curve::G1, bases.len(), mem)?;
        set.load_g1(&stream, bases)?;
        check_stream(&stream)?;
        Ok(set)
    }

    /// Uploads G2 bases and waits.
    pub fn g2(device: &Device, bases: &[G2Affine], mem: &impl DeviceMemory) -> Result<Self, MsmError> {
        let stream = device.new_stream()?;
        let mut set = Self::with_capacity(&stream, Curve::G2, bases.len(), mem)?;
        set.load_g2(&stream, bases)?;
        check_stream(&stream)?;
        Ok(set)
    }

    /// Number of bases.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The group of the bases.
    pub fn curve(&self) -> Curve {
        self.curve
    }

    /// Device bytes held.
    pub fn bytes(&self) -> usize {
        self.n * self.curve.affine_bytes()
    }
}

/// Scalars for an MSM: on the host or on the device.
#[derive(Debug, Clone, Copy)]
pub enum Scalars<'a> {
    /// Host scalars, uploaded into the context's own buffer. Pageable memory: the upload is
    /// staged by the driver and the call waits for the context's stream to drain.
    Host(&'a [Scalar]),
    /// Host scalars in page-locked memory (all of it: `words.len() / 4` scalars, Montgomery
    /// form as on the device), uploaded into the context's own buffer without waiting: the
    /// copy is queued behind the stream's work and the buffer's event records it, so the
    /// host's next `as_mut_slice` waits for the copy, not for the whole stream.
    Pinned(&'a PinnedHostSlice<u64>),
    /// Device scalars: the first `len` Montgomery-form scalars (4 little-endian u64 each) of
    /// `words`, e.g. h from the NTT step.
    Device(&'a CudaSlice<u64>, usize),
    /// Device scalars `offset .. offset + len` of `words` (a chunk of a longer vector).
    DeviceAt(&'a CudaSlice<u64>, usize, usize),
}

impl<'a> Scalars<'a> {
    /// The number of scalars.
    pub fn len(&self) -> usize {
        match self {
            Scalars::Host(s) => s.len(),
            Scalars::Pinned(words) => words.len() / 4,
            Scalars::Device(_, n) | Scalars::DeviceAt(_, _, n) => *n,
        }
    }

    /// Whether there are no scalars.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Scalars `start .. start + len` of these (a piece of a longer sum); `None` when the range
    /// is not within them, or for page-locked scalars, which are uploaded whole.
    pub fn range(&self, start: usize, len: usize) -> Option<Scalars<'a>> {
        let end = start.checked_add(len).filter(|&end| end <= self.len())?;
        match *self {
            Scalars::Host(s) => Some(Scalars::Host(&s[start..end])),
            Scalars::Pinned(_) => None,
            Scalars::Device(words, _) => Some(Scalars::DeviceAt(words, start, len)),
            Scalars::DeviceAt(words, offset, _) => Some(Scalars::DeviceAt(words, offset + start, len)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pieces of host scalars are their sub-slices; a range past the end is refused.
    #[test]
    fn ranges_of_host_scalars_are_their_pieces() {
        let s: Vec<Scalar> = (0..10u64).map(Scalar::from).collect();
        let all = Scalars::Host(&s);
        let Some(Scalars::Host(piece)) = all.range(3, 4) else { panic!("a host piece") };
        assert_eq!(piece, &s[3..7]);
        let Some(Scalars::Host(piece)) = all.range(3, 4).and_then(|p| p.range(1, 3)) else {
            panic!("a piece of a piece")
        };
        assert_eq!(piece, &s[4..7]);
        assert!(all.range(10, 0).is_some_and(|p| p.is_empty()));
        assert!(all.range(7, 4).is_none() && all.range(11, 0).is_none() && all.range(usize::MAX, 2).is_none());
    }
}
