//! What a batch did: per-stage waits, jobs done and failed, how busy the proving stage and
//! each device were, and how full the queue between the stages got.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use kiln_groth16::{BusyClock, BusySpan, DeviceMemoryUse, IdleEdges, Timings};

/// One device's busy time during a batch ([`kiln_groth16::Prover::device_busy`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceBusy {
    /// The prover's name ("cuda:0").
    pub name: String,
    /// Time at least one of its lanes was in its compute phase while the batch ran. Batches
    /// running at once on one device each count the device's whole busy time of their span.
    pub busy: Duration,
    /// How long the device waited from the batch's submission to its first busy instant, and
    /// from its last to the batch's end: the batch's idle ends (the rest of its idle time lies
    /// between proofs). `None` when the prover cannot say.
    pub idle_edges: Option<IdleEdges>,
    /// Its memory when the batch was submitted and when it ended
    /// ([`kiln_groth16::Prover::device_memory`]); `None` when the prover cannot say.
    pub memory: Option<BatchMemory>,
}

/// A device's memory at a batch's two ends. Nothing is allocated while proving, so the two
/// readings agree unless something else on the device allocated meanwhile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchMemory {
    /// At submission.
    pub start: DeviceMemoryUse,
    /// When the last result was in.
    pub end: DeviceMemoryUse,
}

impl BatchMemory {
    /// The larger device-wide use of the two readings.
    pub fn peak_in_use(&self) -> u64 {
        self.start.in_use.max(self.end.in_use)
    }
}

/// A batch's figures, complete once [`crate::BatchHandle::wait`] returns them.
#[derive(Debug, Clone, Default)]
pub struct Metrics {
    /// Provers retired during the batch after a device failure (a sticky CUDA error), by name.
    pub retired: Vec<String>,
    /// Jobs whose prover's device was lost while proving them, proved by another prover.
    pub jobs_moved: usize,
    /// Submission to the last result.
    pub wall: Duration,
    /// Jobs submitted.
    pub jobs: usize,
    /// Jobs that gave a proof (verified, unless the options turned verification off).
    pub jobs_done: usize,
    /// Jobs that failed (any [`crate::JobError`]).
    pub jobs_failed: usize,
    /// Threads of the CPU (witness) stage.
    pub cpu_threads: usize,
    /// Proving workers.
    pub workers: usize,
    /// Capacity of the queue of witnesses between the stages.
    pub queue_depth: usize,
    /// Summed over jobs: submission until a CPU thread took the job.
    pub feed_wait: Duration,
    /// Summed over CPU threads: time blocked on the full queue (backpressure: the proving
    /// stage is the bottleneck when this is large).
    pub backpressure_wait: Duration,
    /// Summed over jobs: witness ready until a proving worker took it.
    pub queue_wait: Duration,
    /// Summed over proving workers: time waiting for a witness (the CPU stage is the
    /// bottleneck when this is large).
    pub starved_wait: Duration,
    /// Time at least one worker was proving (the union of the proving intervals: host
    /// preparation and verification included).
    pub proving_busy: Duration,
    /// Submission until the first proof started: the pipeline's fill (the first witness),
    /// which no overlap can hide within one batch.
    pub fill: Duration,
    /// Per device prover, its busy time during the batch (none for the CPU prover).
    pub devices: Vec<DeviceBusy>,
    /// Most witnesses ever waiting in the queue at once (at most `queue_depth`).
    pub peak_queue_depth: usize,
    /// Most witnesses ever alive at once: generated and not yet dropped by the proving stage.
    /// At most `queue_depth + cpu_threads + workers` (one blocked on the full queue per CPU
    /// thread, one being proved per worker), however many jobs were submitted.
    pub peak_witnesses: usize,
    /// The phases of every proof, summed (witness generation counted as synthesis).
    pub timings: Timings,
}

impl Metrics {
    /// `proving_busy / wall`: the share of the wall time the prover was kept working.
    pub fn busy_fraction(&self) -> f64 {
        if self.wall.is_zero() { 0.0 } else { self.proving_busy.as_secs_f64() / self.wall.as_secs_f64() }
    }

    /// The devices' busy time over the wall time, averaged over the devices; `None` without
    /// a device. The measure of how well the CPU stage keeps the GPUs fed.
    pub fn device_busy_fraction(&self) -> Option<f64> {
        self.device_busy_over(self.wall)
    }

    /// The same over the wall time after the fill ([`Metrics::fill`]): how busy the devices
    /// were once the first witness was ready, which is what longer batches approach.
    pub fn device_busy_after_fill(&self) -> Option<f64> {
        self.device_busy_over(self.wall.saturating_sub(self.fill))
    }

    fn device_busy_over(&self, span: Duration) -> Option<f64> {
        if self.devices.is_empty() || span.is_zero() {
            return None;
        }
        let busy: f64 = self.devices.iter().map(|d| d.busy.as_secs_f64()).sum();
        Some(busy / self.devices.len() as f64 / span.as_secs_f64())
    }

    /// Proofs made per minute of wall time.
    pub fn proofs_per_minute(&self) -> f64 {
        if self.wall.is_zero() { 0.0 } else { self.jobs_done as f64 * 60.0 / self.wall.as_secs_f64() }
    }
}

/// The live counters the stages update; turned into [`Metrics`] at the end.
#[derive(Debug)]
pub(crate) struct Collector {
    pub(crate) figures: Mutex<Metrics>,
    /// When the batch was submitted.
    started: Instant,
    /// When the first proof started.
    first_proof: OnceLock<Instant>,
    proving: BusyClock,
    witnesses: AtomicUsize,
    peak_witnesses: AtomicUsize,
    peak_queue: AtomicUsize,
}

impl Collector {
    pub(crate) fn new(started: Instant) -> Collector {
        Collector {
            figures: Mutex::default(),
            started,
            first_proof: OnceLock::new(),
            proving: BusyClock::default(),
            witnesses: AtomicUsize::new(0),
            peak_witnesses: AtomicUsize::new(0),
            peak_queue: AtomicUsize::new(0),
        }
    }

    /// Adds to the summed figures.
    pub(crate) fn add(&self, f: impl FnOnce(&mut Metrics)) {
        f(&mut self.figures.lock().unwrap_or_else(|e| e.into_inner()));
    }

    /// A worker starts proving; it stops when the span is dropped.
    pub(crate) fn proving(&self) -> BusySpan<'_> {
        self.first_proof.get_or_init(Instant::now);
        self.proving.enter()
    }

    pub(crate) fn witness_made(&self) {
        let now = self.witnesses.fetch_add(1, Ordering::SeqCst) + 1;
        self.peak_witnesses.fetch_max(now, Ordering::SeqCst);
    }

    pub(crate) fn witness_dropped(&self) {
        self.witnesses.fetch_sub(1, Ordering::SeqCst);
    }

    pub(crate) fn queue_length(&self, len: usize) {
        self.peak_queue.fetch_max(len, Ordering::Relaxed);
    }

    /// The final figures, with `wall` measured by the caller.
    pub(crate) fn finish(&self, wall: Duration) -> Metrics {
        let mut m = self.figures.lock().unwrap_or_else(|e| e.into_inner()).clone();
        m.wall = wall;
        m.proving_busy = self.proving.total();
        m.fill = self.first_proof.get().map_or(wall, |&t| t.saturating_duration_since(self.started));
        m.peak_witnesses = self.peak_witnesses.load(Ordering::SeqCst);
        m.peak_queue_depth = self.peak_queue.load(Ordering::Relaxed);
        m
    }
}

/// Adds `o`'s phases to `t`.
pub(crate) fn add_timings(t: &mut Timings, o: &Timings) {
    t.synthesis += o.synthesis;
    t.prepare += o.prepare;
    t.h_poly += o.h_poly;
    t.msm_h_l += o.msm_h_l;
    t.msm_a_b_g1 += o.msm_a_b_g1;
    t.msm_b_g2 += o.msm_b_g2;
    t.epilogue += o.epilogue;
    t.verify += o.verify;
    t.on_gpu |= o.on_gpu;
}
