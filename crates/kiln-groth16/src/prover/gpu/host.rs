//! One proof's host side: its a, b and query scalars in page-locked memory (a
//! [`HostSet`]), and the pool of such sets a prover shares between its proofs.
//!
//! A prover has one set per lane, and spare sets for proofs that prepare ahead: while every
//! lane is busy, a proof takes a free set and does all of its host work (the scalars staged,
//! a and b evaluated) before it waits for a lane, so that its device work then starts at once
//! and the host's work overlaps the other proofs' sums. At 2^27 a set is ~17 GiB.

use std::sync::{Condvar, Mutex, MutexGuard};

use blstrs::Scalar;
use kiln_cuda::cudarc::driver::PinnedHostSlice;
use kiln_cuda::{Device, alloc_pinned};
use kiln_field::DeviceLayout;
use kiln_msm::gpu::Scalars;

use super::Sizing;
use crate::error::Groth16Error;

/// One proof's page-locked host buffers: a and b (write-combined: only uploaded; c is formed
/// on the device) and the query scalars.
pub(super) struct HostSet {
    pub(super) ab: [PinnedHostSlice<u64>; 2],
    pub(super) scalars: HostScalars,
}

impl HostSet {
    pub(super) fn new(device: &Device, s: &Sizing) -> Result<HostSet, Groth16Error> {
        let words = s.n * <Scalar as DeviceLayout>::WORDS;
        let ab = [alloc_pinned(device, words, true)?, alloc_pinned(device, words, true)?];
        Ok(HostSet { ab, scalars: HostScalars::new(device, s)? })
    }

    /// Page-locked bytes of one set for these sizes.
    pub(super) fn bytes(s: &Sizing) -> u64 {
        32 * (2 * s.n + s.aux + s.a + s.b) as u64
    }
}

/// The free sets; [`HostSets::take`] waits for one.
pub(super) struct HostSets {
    free: Mutex<Vec<HostSet>>,
    returned: Condvar,
    count: usize,
}

impl HostSets {
    pub(super) fn new(sets: Vec<HostSet>) -> HostSets {
        HostSets { count: sets.len(), free: Mutex::new(sets), returned: Condvar::new() }
    }

    /// How many sets the prover has.
    pub(super) fn count(&self) -> usize {
        self.count
    }

    /// A free set, once one is (every set comes back when its proof's guard drops).
    pub(super) fn take(&self) -> HostSetGuard<'_> {
        let mut free = lock(&self.free);
        loop {
            if let Some(set) = free.pop() {
                let in_use = self.count - free.len();
                return HostSetGuard { sets: self, set: Some(set), in_use };
            }
            free = self.returned.wait(free).unwrap_or_else(|e| e.into_inner());
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A set taken for one proof; back in the pool on drop (also when the proof failed: the set
/// holds nothing a later proof reads before rewriting it).
pub(super) struct HostSetGuard<'a> {
    sets: &'a HostSets,
    set: Option<HostSet>,
    /// Sets in use when this one was taken, itself included: more than the lanes means this
    /// proof will wait for a lane.
    pub(super) in_use: usize,
}

impl std::ops::Deref for HostSetGuard<'_> {
    type Target = HostSet;
    fn deref(&self) -> &HostSet {
        self.set.as_ref().expect("held until drop")
    }
}

impl std::ops::DerefMut for HostSetGuard<'_> {
    fn deref_mut(&mut self) -> &mut HostSet {
        self.set.as_mut().expect("held until drop")
    }
}

impl Drop for HostSetGuard<'_> {
    fn drop(&mut self) {
        if let Some(set) = self.set.take() {
            lock(&self.sets.free).push(set);
            self.sets.returned.notify_one();
        }
    }
}

/// One proof's query scalars in page-locked memory, one buffer per query, sized once for the
/// parameters.
pub(super) struct HostScalars {
    /// L's: every aux value.
    pub(super) aux: Staged,
    /// A's: the inputs, then A's dense aux.
    pub(super) a: Staged,
    /// B's (G1 and G2): B's dense inputs, then B's dense aux.
    pub(super) b: Staged,
}

impl HostScalars {
    /// Not write-combined: the streamed path reads them back on the host.
    fn new(device: &Device, s: &Sizing) -> Result<HostScalars, Groth16Error> {
        let words = <Scalar as DeviceLayout>::WORDS;
        let staged = |n: usize| -> Result<_, Groth16Error> {
            Ok(Staged(if n == 0 { None } else { Some(alloc_pinned(device, words * n, false)?) }))
        };
        Ok(HostScalars { aux: staged(s.aux)?, a: staged(s.a)?, b: staged(s.b)? })
    }
}

/// One query's scalars in page-locked memory (`None` for an empty query: the driver cannot
/// page-lock zero bytes).
pub(super) struct Staged(Option<PinnedHostSlice<u64>>);

impl Staged {
    pub(super) fn pinned(&self) -> Option<&PinnedHostSlice<u64>> {
        self.0.as_ref()
    }

    /// The scalars for an MSM context to upload.
    pub(super) fn scalars(&self) -> Scalars<'_> {
        self.pinned().map_or(Scalars::Host(&[]), Scalars::Pinned)
    }

    /// The buffer as scalars to write, once the uploads still reading it are done.
    pub(super) fn view_mut(&mut self) -> Result<&mut [Scalar], Groth16Error> {
        let Some(buf) = &mut self.0 else { return Ok(&mut []) };
        let words = buf.as_mut_slice().map_err(|e| kiln_cuda::CudaError::driver("pinned scalars wait", e))?;
        Ok(Scalar::from_u64s_mut(words).map_err(kiln_ntt::NttError::from)?)
    }

    /// The buffer as scalars to read (the streamed SRS path sums them in host-sized chunks).
    pub(super) fn view(&self) -> Result<&[Scalar], Groth16Error> {
        let Some(buf) = self.pinned() else { return Ok(&[]) };
        let words = buf.as_slice().map_err(|e| kiln_cuda::CudaError::driver("pinned scalars wait", e))?;
        Ok(Scalar::from_u64s_ref(words).map_err(kiln_ntt::NttError::from)?)
    }
}
