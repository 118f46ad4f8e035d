//! The device half of the model: capacity, a stream-ordered memory pool, streams and
//! engines, in simulated time (microseconds).
//!
//! Semantics follow the CUDA driver's (ARCHITECTURE.md §1):
//! - `alloc_async` takes memory when it is *called* (pool memory that is unused, else the
//!   device's free memory), as `cuMemAllocAsync` does;
//! - `free_async` is an operation queued on its stream: the bytes return to the pool only
//!   when the stream reaches it;
//! - `trim` (`cuMemPoolTrimTo`) releases only unused pool memory, i.e. completed frees;
//! - at synchronization points the pool shrinks to its release threshold (only unused
//!   memory, again);
//! - `mem_get_info` reports capacity minus what the pool holds minus synchronous allocations.
//!
//! Kernels of different streams either take turns ([`ComputeSharing::Serial`]: each fills
//! the GPU) or share it ([`ComputeSharing::Shared`]: every stream's head kernel runs at once,
//! slowed down once together they want more than the whole GPU, as large kernels of
//! concurrent streams interleave their blocks on the SMs). Sharing stretches every kernel that
//! overlaps another, so the workers behind them reach their CPU work later and together, where
//! taking turns staggers them; and kernels that alone leave SMs idle gain from company.
//!
//! Simplification: the pool does not reuse a free still pending on the same stream for a
//! new allocation on that stream (CUDA may). The model is therefore pessimistic there,
//! which never hides an out-of-memory of the scenarios it runs (their next allocation on a
//! stream always follows a wait on it).

use std::collections::VecDeque;

/// Simulated time in microseconds.
pub type Micros = u64;

/// Index of a stream in the model.
pub type StreamId = usize;

/// Identifies one queued operation, to wait for it.
pub type OpId = usize;

/// The two engines of the model: kernels share one compute engine, copies one copy engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// SMs: kernels run one after another (each fills the GPU).
    Compute,
    /// The copy engine: host↔device transfers.
    Copy,
}

/// How kernels of different streams use the compute engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ComputeSharing {
    /// One kernel at a time, the oldest waiting first.
    #[default]
    Serial,
    /// Every stream's head kernel at once. A kernel alone occupies `solo_permille` / 1000 of
    /// the GPU (a lane's compute phase alone leaves some SMs idle: launches, small kernels, the
    /// tails of waves); k of them run at their solo speed while k × that share fits in the GPU,
    /// else each at 1 / (k × share) of it.
    Shared {
        /// The GPU share of one kernel alone, per mille (1000: one kernel fills the GPU).
        solo_permille: u32,
    },
}

#[derive(Debug, Clone, Copy)]
enum OpKind {
    Work { engine: Engine, duration: Micros },
    Free { bytes: u64 },
}

#[derive(Debug, Clone, Copy)]
struct Op {
    id: OpId,
    kind: OpKind,
    owner: usize,
}

#[derive(Debug, Default)]
struct Stream {
    queue: VecDeque<Op>,
    /// The running operation and when it ends (for a shared kernel: when it would end if the
    /// kernels running now kept running).
    running: Option<(Op, Micros)>,
    /// A shared kernel's work left, in microseconds of it running alone.
    shared_left: f64,
}

/// The device model. Deterministic: same calls, same results.
#[derive(Debug)]
pub struct DeviceModel {
    capacity: u64,
    pool_reserved: u64,
    pool_in_use: u64,
    sync_allocated: u64,
    release_threshold: u64,
    streams: Vec<Stream>,
    engine_busy: [Option<StreamId>; 2],
    done: Vec<bool>,
    now: Micros,
    peak_used: u64,
    compute_busy: Micros,
    sharing: ComputeSharing,
}

/// An allocation the model refused: what was asked and what was there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutOfMemory {
    /// Bytes asked for.
    pub requested: u64,
    /// Unused pool memory plus free device memory at the time.
    pub available: u64,
}

impl DeviceModel {
    /// A device of `capacity` bytes with `streams` streams and the pool's release
    /// threshold (`CU_MEMPOOL_ATTR_RELEASE_THRESHOLD`; CUDA's default is 0).
    pub fn new(capacity: u64, streams: usize, release_threshold: u64) -> Self {
        DeviceModel {
            capacity,
            pool_reserved: 0,
            pool_in_use: 0,
            sync_allocated: 0,
            release_threshold,
            streams: (0..streams).map(|_| Stream::default()).collect(),
            engine_busy: [None, None],
            done: Vec::new(),
            now: 0,
            peak_used: 0,
            compute_busy: 0,
            sharing: ComputeSharing::Serial,
        }
    }

    /// The same device with kernels of different streams sharing the engine as `sharing` says.
    pub fn with_sharing(mut self, sharing: ComputeSharing) -> Self {
        self.sharing = sharing;
        self
    }

    /// Current simulated time.
    pub fn now(&self) -> Micros {
        self.now
    }

    /// `cuMemGetInfo`'s free bytes: capacity minus pool reservations minus synchronous allocations.
    pub fn mem_get_info(&self) -> u64 {
        self.capacity - self.pool_reserved - self.sync_allocated
    }

    /// Bytes taken from the device now (pool reservations plus synchronous allocations).
    pub fn used(&self) -> u64 {
        self.pool_reserved + self.sync_allocated
    }

    /// The most bytes ever taken from the device.
    pub fn peak_used(&self) -> u64 {
        self.peak_used
    }

    /// Microseconds the compute engine has been busy (running at least one kernel).
    pub fn compute_busy(&self) -> Micros {
        self.compute_busy
    }

    /// Pool memory reserved but not allocated (completed frees not yet released).
    pub fn pool_unused(&self) -> u64 {
        self.pool_reserved - self.pool_in_use
    }

    fn note_peak(&mut self) {
        self.peak_used = self.peak_used.max(self.used());
    }

    /// `cuMemAllocAsync` on `stream`: takes the memory now (unused pool memory first).
    pub fn alloc_async(&mut self, _stream: StreamId, bytes: u64) -> Result<(), OutOfMemory> {
        let unused = self.pool_unused();
        if bytes > unused {
            let grow = bytes - unused;
            if grow > self.mem_get_info() {
                return Err(OutOfMemory { requested: bytes, available: unused + self.mem_get_info() });
            }
            self.pool_reserved += grow;
        }
        self.pool_in_use += bytes;
        self.note_peak();
        Ok(())
    }

    /// `cuMemAlloc` (device-global): outside the pool, from free device memory.
    pub fn alloc_sync(&mut self, bytes: u64) -> Result<(), OutOfMemory> {
        if bytes > self.mem_get_info() {
            return Err(OutOfMemory { requested: bytes, available: self.mem_get_info() });
        }
        self.sync_allocated += bytes;
        self.note_peak();
        Ok(())
    }

    /// `cuMemFree` (device-global) of `bytes` from [`DeviceModel::alloc_sync`]. The caller
    /// must have drained the device first (it is a synchronization point in CUDA).
    pub fn free_sync(&mut self, bytes: u64) {
        self.sync_allocated -= bytes.min(self.sync_allocated);
    }

    fn push(&mut self, stream: StreamId, kind: OpKind, owner: usize) -> OpId {
        let id = self.done.len();
        self.done.push(false);
        self.streams[stream].queue.push_back(Op { id, kind, owner });
        self.pump();
        id
    }

    /// Queues work of `duration` on `stream`, run by `engine`; `owner` is the worker that
    /// issued it (for the overlap check).
    pub fn enqueue(&mut self, stream: StreamId, engine: Engine, duration: Micros, owner: usize) -> OpId {
        self.push(stream, OpKind::Work { engine, duration }, owner)
    }

    /// `cuMemFreeAsync` of `bytes` on `stream`: returns them to the pool when the stream gets there.
    pub fn free_async(&mut self, stream: StreamId, bytes: u64, owner: usize) -> OpId {
        self.push(stream, OpKind::Free { bytes }, owner)
    }

    /// Whether operation `op` has completed.
    pub fn is_done(&self, op: OpId) -> bool {
        self.done[op]
    }

    /// Whether every stream is empty (what `cuCtxSynchronize` waits for).
    pub fn idle(&self) -> bool {
        self.streams.iter().all(|s| s.running.is_none() && s.queue.is_empty())
    }

    /// Whether some stream still holds work issued by a worker other than `worker`.
    pub fn has_work_of_others(&self, worker: usize) -> bool {
        self.streams
            .iter()
            .any(|s| s.running.iter().any(|(op, _)| op.owner != worker) || s.queue.iter().any(|op| op.owner != worker))
    }

    /// `cuMemPoolTrimTo(keep)` (device-global): releases unused pool memory — completed
    /// frees only — until the pool reserves at most `keep` bytes.
    pub fn trim(&mut self, keep: u64) {
        self.pool_reserved = self.pool_in_use.max(self.pool_reserved.min(keep));
    }

    /// A synchronization point (stream, event or context synchronize completed): the pool
    /// gives unused memory above its release threshold back to the device.
    pub fn sync_point(&mut self) {
        self.trim(self.release_threshold);
    }

    /// Starts every operation that can start now; runs frees that reached their stream's head.
    fn pump(&mut self) {
        loop {
            let mut progressed = false;
            for s in 0..self.streams.len() {
                if self.streams[s].running.is_some() {
                    continue;
                }
                if let Some(&Op { kind: OpKind::Free { bytes }, id, .. }) = self.streams[s].queue.front() {
                    self.streams[s].queue.pop_front();
                    self.pool_in_use -= bytes;
                    self.done[id] = true;
                    progressed = true;
                }
            }
            if matches!(self.sharing, ComputeSharing::Shared { .. }) {
                for s in 0..self.streams.len() {
                    let stream = &mut self.streams[s];
                    if stream.running.is_some() {
                        continue;
                    }
                    if let Some(&op @ Op { kind: OpKind::Work { engine: Engine::Compute, duration }, .. }) =
                        stream.queue.front()
                    {
                        stream.queue.pop_front();
                        stream.running = Some((op, self.now));
                        stream.shared_left = duration as f64;
                        progressed = true;
                    }
                }
            }
            // Each idle engine takes the oldest waiting operation at a stream head.
            for (e, engine) in [Engine::Compute, Engine::Copy].into_iter().enumerate() {
                if self.engine_busy[e].is_some()
                    || (engine == Engine::Compute && matches!(self.sharing, ComputeSharing::Shared { .. }))
                {
                    continue;
                }
                let pick = (0..self.streams.len())
                    .filter(|&s| self.streams[s].running.is_none())
                    .filter_map(|s| match self.streams[s].queue.front() {
                        Some(op @ Op { kind: OpKind::Work { engine: en, .. }, .. }) if *en == engine => {
                            Some((op.id, s))
                        }
                        _ => None,
                    })
                    .min();
                if let Some((_, s)) = pick {
                    let op = self.streams[s].queue.pop_front().expect("picked a non-empty stream");
                    let OpKind::Work { duration, .. } = op.kind else { unreachable!("filtered to work") };
                    self.streams[s].running = Some((op, self.now + duration));
                    self.engine_busy[e] = Some(s);
                    if engine == Engine::Compute {
                        self.compute_busy += duration;
                    }
                    progressed = true;
                }
            }
            if !progressed {
                break;
            }
        }
        self.project_shared_ends();
    }

    /// Whether stream `s` runs a shared kernel.
    fn runs_shared(&self, s: StreamId) -> bool {
        matches!(self.sharing, ComputeSharing::Shared { .. })
            && matches!(
                self.streams[s].running,
                Some((Op { kind: OpKind::Work { engine: Engine::Compute, .. }, .. }, _))
            )
    }

    /// Kernels running now under [`ComputeSharing::Shared`].
    fn shared_count(&self) -> usize {
        (0..self.streams.len()).filter(|&s| self.runs_shared(s)).count()
    }

    /// How fast each shared kernel runs now, against its speed alone.
    fn shared_speed(&self) -> f64 {
        let ComputeSharing::Shared { solo_permille } = self.sharing else { return 1.0 };
        let demand = self.shared_count() as f64 * f64::from(solo_permille.max(1)) / 1000.0;
        if demand > 1.0 { 1.0 / demand } else { 1.0 }
    }

    /// Each shared kernel's end if the kernels running now keep running (whole microseconds,
    /// rounded up, at least one on from now while work is left).
    fn project_shared_ends(&mut self) {
        let speed = self.shared_speed();
        for s in 0..self.streams.len() {
            if self.runs_shared(s) {
                let left = self.streams[s].shared_left;
                // The epsilon keeps float noise (100 / (2/3) = 150.000…01) from adding a microsecond.
                let end = self.now + ((left / speed - 1e-6).ceil() as Micros).max(1);
                if let Some((_, e)) = &mut self.streams[s].running {
                    *e = end;
                }
            }
        }
    }

    /// Moves time on to `t` (no operation ends before it): shared kernels progress by their share.
    fn elapse(&mut self, t: Micros) {
        let dt = t.saturating_sub(self.now);
        let speed = self.shared_speed();
        if dt > 0 && self.shared_count() > 0 {
            self.compute_busy += dt;
            for s in 0..self.streams.len() {
                if self.runs_shared(s) {
                    self.streams[s].shared_left -= dt as f64 * speed;
                }
            }
        }
        self.now = self.now.max(t);
    }

    /// When the next running operation ends, if any is running.
    pub fn next_completion(&self) -> Option<Micros> {
        self.streams.iter().filter_map(|s| s.running.map(|(_, end)| end)).min()
    }

    /// Advances simulated time to `t`, completing every operation that ends by then.
    pub fn advance_to(&mut self, t: Micros) {
        while let Some(end) = self.next_completion().filter(|&end| end <= t) {
            self.elapse(end);
            for s in 0..self.streams.len() {
                if let Some((op, e)) = self.streams[s].running
                    && e == end
                {
                    self.streams[s].running = None;
                    self.done[op.id] = true;
                    for slot in &mut self.engine_busy {
                        if *slot == Some(s) {
                            *slot = None;
                        }
                    }
                }
            }
            self.pump();
        }
        self.elapse(t);
        self.project_shared_ends();
    }

    /// Runs until every stream is empty (the device side of `cuCtxSynchronize`), without
    /// applying the synchronization point's release (call [`DeviceModel::sync_point`]).
    pub fn run_until_idle(&mut self) {
        while let Some(end) = self.next_completion() {
            self.advance_to(end);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    /// The premise of §1 in the model: a trim cannot release a free queued behind a kernel.
    #[test]
    fn trim_cannot_release_a_free_queued_behind_a_kernel() {
        let mut d = DeviceModel::new(24 * GIB, 2, u64::MAX);
        d.alloc_async(0, 12 * GIB).unwrap();
        d.enqueue(0, Engine::Compute, 1_800_000, 0);
        d.free_async(0, 12 * GIB, 0);
        d.trim(0);
        assert_eq!(d.mem_get_info(), 12 * GIB, "the pending free must not be released");
        assert!(d.alloc_async(1, 13 * GIB).is_err());
        d.advance_to(1_800_000);
        assert_eq!(d.mem_get_info(), 12 * GIB, "completed but not trimmed (threshold is max)");
        d.trim(0);
        assert_eq!(d.mem_get_info(), 24 * GIB);
    }

    #[test]
    fn engines_serialize_kernels_and_overlap_copies() {
        let mut d = DeviceModel::new(GIB, 3, 0);
        let a = d.enqueue(0, Engine::Compute, 100, 0);
        let b = d.enqueue(1, Engine::Compute, 100, 1);
        let c = d.enqueue(2, Engine::Copy, 50, 2);
        d.advance_to(100);
        assert!(d.is_done(a) && d.is_done(c) && !d.is_done(b));
        d.run_until_idle();
        assert_eq!(d.now(), 200);
        assert_eq!(d.compute_busy(), 200);
    }

    #[test]
    fn release_threshold_applies_at_sync_points() {
        let mut d = DeviceModel::new(10 * GIB, 1, 2 * GIB);
        d.alloc_async(0, 5 * GIB).unwrap();
        d.free_async(0, 5 * GIB, 0);
        assert_eq!(d.pool_unused(), 5 * GIB);
        d.sync_point();
        assert_eq!(d.mem_get_info(), 8 * GIB);
        d.alloc_async(0, 2 * GIB).unwrap();
        assert_eq!(d.mem_get_info(), 8 * GIB, "reused from the pool");
        assert_eq!(d.peak_used(), 5 * GIB);
    }
}
