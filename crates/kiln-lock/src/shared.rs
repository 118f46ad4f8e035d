//! The policies for real threads: a [`LockPolicy`] state machine behind a `Mutex` and a
//! `Condvar`, handing out guards. Device-global operations are methods of
//! [`ExclusiveGuard`] only, so a lane cannot call them: the type system is the first check,
//! [`LockPolicy::check_device_global`] the second.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use kiln_cuda::cudarc::driver::{result, sys};
use kiln_cuda::{CudaError, CudaResultExt, Device};

use crate::policy::{LockError, LockPolicy, Section, WorkerId};

/// A lock policy shared by the worker threads of one device.
#[derive(Debug)]
pub struct SharedPolicy<P> {
    state: Mutex<P>,
    changed: Condvar,
}

impl<P: LockPolicy> SharedPolicy<P> {
    /// Wraps `policy` for sharing between threads.
    pub fn new(policy: P) -> Arc<Self> {
        Arc::new(SharedPolicy { state: Mutex::new(policy), changed: Condvar::new() })
    }

    fn lock(&self) -> MutexGuard<'_, P> {
        // A worker that panicked inside a section leaves the state consistent (every
        // transition is one call), so a poisoned mutex is still usable.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn enter(&self, worker: WorkerId, section: Section) -> Result<(), LockError> {
        let mut state = self.lock();
        while !state.try_enter(worker, section)? {
            state = self.changed.wait(state).unwrap_or_else(|p| p.into_inner());
        }
        Ok(())
    }

    fn leave(&self, worker: WorkerId, section: Section) -> Result<(), LockError> {
        let r = self.lock().leave(worker, section);
        self.changed.notify_all();
        r
    }

    /// Blocks until `worker` may start its memory phase.
    pub fn memory(self: &Arc<Self>, worker: WorkerId) -> Result<MemoryGuard<P>, LockError> {
        self.enter(worker, Section::Memory)?;
        let lane = self.lock().lane_of(worker);
        Ok(MemoryGuard { policy: self.clone(), worker, lane, done: false })
    }

    /// Blocks until `worker` has the whole device (under [`crate::Lanes`]: all lanes drained).
    pub fn exclusive(self: &Arc<Self>, worker: WorkerId) -> Result<ExclusiveGuard<P>, LockError> {
        self.enter(worker, Section::Exclusive)?;
        Ok(ExclusiveGuard { policy: self.clone(), worker })
    }

    /// Runs `f` on the policy state (for reports and tests).
    pub fn with_state<R>(&self, f: impl FnOnce(&P) -> R) -> R {
        f(&self.lock())
    }
}

/// A worker's memory phase. Turn it into the compute phase with [`MemoryGuard::into_compute`].
#[derive(Debug)]
pub struct MemoryGuard<P: LockPolicy> {
    policy: Arc<SharedPolicy<P>>,
    worker: WorkerId,
    lane: Option<usize>,
    done: bool,
}

impl<P: LockPolicy> MemoryGuard<P> {
    /// The lane (arena and stream) this worker uses, under policies with lanes.
    pub fn lane(&self) -> Option<usize> {
        self.lane
    }

    /// Leaves the memory phase and blocks until the compute phase may start.
    pub fn into_compute(mut self) -> Result<ComputeGuard<P>, LockError> {
        self.done = true;
        self.policy.leave(self.worker, Section::Memory)?;
        self.policy.enter(self.worker, Section::Compute)?;
        Ok(ComputeGuard { policy: self.policy.clone(), worker: self.worker, lane: self.lane })
    }
}

impl<P: LockPolicy> Drop for MemoryGuard<P> {
    fn drop(&mut self) {
        if !self.done {
            // Abandoned before compute (an error in the memory phase): give everything back.
            let _ = self.policy.leave(self.worker, Section::Memory);
            let mut state = self.policy.lock();
            if state.try_enter(self.worker, Section::Compute).unwrap_or(false) {
                let _ = state.leave(self.worker, Section::Compute);
            }
            drop(state);
            self.policy.changed.notify_all();
        }
    }
}

/// A worker's compute phase; leaving it (drop) frees the lane.
#[derive(Debug)]
pub struct ComputeGuard<P: LockPolicy> {
    policy: Arc<SharedPolicy<P>>,
    worker: WorkerId,
    lane: Option<usize>,
}

impl<P: LockPolicy> ComputeGuard<P> {
    /// The lane (arena and stream) this worker uses, under policies with lanes.
    pub fn lane(&self) -> Option<usize> {
        self.lane
    }
}

impl<P: LockPolicy> Drop for ComputeGuard<P> {
    fn drop(&mut self) {
        let _ = self.policy.leave(self.worker, Section::Compute);
    }
}

/// Exclusive access to the device. The only holder of device-global operations.
#[derive(Debug)]
pub struct ExclusiveGuard<P: LockPolicy> {
    policy: Arc<SharedPolicy<P>>,
    worker: WorkerId,
}

impl<P: LockPolicy> ExclusiveGuard<P> {
    /// The worker holding the device.
    pub fn worker(&self) -> WorkerId {
        self.worker
    }

    /// Runs the policy's runtime check for a device-global `op` (defence in depth: the
    /// guard's existence already proves it under [`crate::Lanes`]).
    pub fn check(&self, op: &'static str) -> Result<(), LockError> {
        self.policy.lock().check_device_global(self.worker, op)
    }

    /// `cuCtxSynchronize`: waits for every stream of every worker.
    pub fn synchronize(&self, device: &Device) -> Result<(), DeviceGlobalError> {
        self.check("cuCtxSynchronize")?;
        Ok(device.synchronize_device_global()?)
    }

    /// `cuMemPoolTrimTo(default pool, keep)`: gives unused pool memory back to the device.
    /// Only frees that have *completed* can be released; call [`Self::synchronize`] first.
    pub fn trim_default_pool(&self, device: &Device, keep: usize) -> Result<(), DeviceGlobalError> {
        self.check("cuMemPoolTrimTo")?;
        let pool = default_pool(device)?;
        // SAFETY: `pool` is the device's default pool, valid for the context's lifetime.
        unsafe { result::mem_pool::trim_to(pool, keep) }.ctx("cuMemPoolTrimTo")?;
        Ok(())
    }

    /// `cuMemAlloc`: a synchronous allocation outside the pool (not affected by trims or
    /// release thresholds). Returns the device pointer; free it with [`Self::free_sync`].
    pub fn alloc_sync(&self, device: &Device, bytes: usize) -> Result<sys::CUdeviceptr, DeviceGlobalError> {
        self.check("cuMemAlloc")?;
        device.ctx().bind_to_thread().ctx("cuCtxSetCurrent")?;
        // SAFETY: a plain allocation of `bytes`; the memory is uninitialised and callers
        // treat it as raw bytes until they write it.
        Ok(unsafe { result::malloc_sync(bytes) }.ctx("cuMemAlloc")?)
    }

    /// `cuMemFree` of a pointer from [`Self::alloc_sync`]. Implicitly synchronizes the device.
    ///
    /// # Safety
    /// `ptr` must come from [`Self::alloc_sync`] on `device`, be freed once, and no queued
    /// work may still use it (the device is drained under this guard if the caller
    /// synchronized).
    pub unsafe fn free_sync(&self, device: &Device, ptr: sys::CUdeviceptr) -> Result<(), DeviceGlobalError> {
        self.check("cuMemFree")?;
        device.ctx().bind_to_thread().ctx("cuCtxSetCurrent")?;
        // SAFETY: guaranteed by the caller (see above).
        unsafe { result::free_sync(ptr) }.ctx("cuMemFree")?;
        Ok(())
    }
}

impl ExclusiveGuard<crate::Lanes> {
    /// Re-plans the number of lanes (e.g. after `kiln-vram` made a new plan). Needs the
    /// device exclusively, which this guard is.
    pub fn set_lanes(&self, lanes: usize) -> Result<(), LockError> {
        self.policy.lock().set_lanes(lanes)
    }
}

impl<P: LockPolicy> Drop for ExclusiveGuard<P> {
    fn drop(&mut self) {
        let _ = self.policy.leave(self.worker, Section::Exclusive);
    }
}

/// The default memory pool of `device` (the one cudarc's stream-ordered allocations use).
pub fn default_pool(device: &Device) -> Result<sys::CUmemoryPool, CudaError> {
    device.ctx().bind_to_thread().ctx("cuCtxSetCurrent")?;
    // SAFETY: `cu_device` is the device of a live context.
    unsafe { result::device::get_default_mem_pool(device.ctx().cu_device()) }.ctx("cuDeviceGetDefaultMemPool")
}

/// A device-global operation failed: either the lock policy refused it or the driver did.
#[derive(Debug, thiserror::Error)]
pub enum DeviceGlobalError {
    /// The policy's runtime check refused it.
    #[error(transparent)]
    Lock(#[from] LockError),
    /// The driver call failed.
    #[error(transparent)]
    Cuda(#[from] CudaError),
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::policy::{Lanes, Serial};

    /// Real threads on the real policy: lanes never exceed their count, the exclusive
    /// section never overlaps a lane, and everything finishes (no deadlock).
    #[test]
    fn threads_respect_lanes_and_exclusive() {
        let policy = SharedPolicy::new(Lanes::new(2).unwrap());
        let in_lanes = Arc::new(AtomicUsize::new(0));
        let in_exclusive = Arc::new(AtomicUsize::new(0));
        let violations = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..5)
            .map(|w| {
                let (policy, in_lanes, in_exclusive, violations) =
                    (policy.clone(), in_lanes.clone(), in_exclusive.clone(), violations.clone());
                std::thread::spawn(move || {
                    for i in 0..200 {
                        if (w + i) % 17 == 0 {
                            let g = policy.exclusive(w).unwrap();
                            in_exclusive.fetch_add(1, Ordering::SeqCst);
                            if in_lanes.load(Ordering::SeqCst) != 0 {
                                violations.fetch_add(1, Ordering::SeqCst);
                            }
                            g.check("test").unwrap();
                            std::thread::yield_now();
                            in_exclusive.fetch_sub(1, Ordering::SeqCst);
                            drop(g);
                        }
                        let m = policy.memory(w).unwrap();
                        let now = in_lanes.fetch_add(1, Ordering::SeqCst) + 1;
                        if now > 2 || in_exclusive.load(Ordering::SeqCst) != 0 {
                            violations.fetch_add(1, Ordering::SeqCst);
                        }
                        let c = m.into_compute().unwrap();
                        assert!(c.lane().is_some_and(|l| l < 2));
                        std::thread::yield_now();
                        in_lanes.fetch_sub(1, Ordering::SeqCst);
                        drop(c);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(violations.load(Ordering::SeqCst), 0, "a lane ran beside exclusive access or lanes overflowed");
        assert_eq!(policy.with_state(|p| p.busy_lanes()), 0);
    }

    #[test]
    fn serial_threads_are_mutually_exclusive() {
        let policy = SharedPolicy::new(Serial::new());
        let inside = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..4)
            .map(|w| {
                let (policy, inside) = (policy.clone(), inside.clone());
                std::thread::spawn(move || {
                    for _ in 0..100 {
                        let m = policy.memory(w).unwrap();
                        assert_eq!(inside.fetch_add(1, Ordering::SeqCst), 0);
                        let c = m.into_compute().unwrap();
                        inside.fetch_sub(1, Ordering::SeqCst);
                        drop(c);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
    }

    #[test]
    fn abandoned_memory_phase_frees_the_lane() {
        let policy = SharedPolicy::new(Lanes::new(1).unwrap());
        drop(policy.memory(0).unwrap());
        let g = policy.memory(1).unwrap();
        assert_eq!(g.lane(), Some(0));
    }
}
