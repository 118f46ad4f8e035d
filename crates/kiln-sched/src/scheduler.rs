//! The pipeline: a bounded pool of CPU threads makes witnesses into a bounded queue; proving
//! workers (one per prover lane) take them one at a time.
//!
//! Why this shape: ARCHITECTURE.md §1. Keeping a GPU busy means preparing the next proof on
//! the CPU while the current one is on the device; the two-lock design that tried it issued
//! device-global calls while another worker computed. Here the scheduler never touches the
//! device: each worker calls [`prove_witnesses`] for one job, and the prover takes a lane of
//! its kiln-lock policy for it (arenas, streams, nothing device-global). Overlap comes from
//! the stages running side by side, not from splitting a prover's locks.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam::channel::{self, Receiver, Sender};
use kiln_groth16::{DeviceMemoryUse, Proof, ProveOptions, Prover, Scalar, Shape, Timings, Witness, prove_witnesses};

use crate::error::{JobError, SchedError, Stage, panic_message};
use crate::job::{Job, JobId};
use crate::metrics::{BatchMemory, Collector, DeviceBusy, Metrics, add_timings};

/// A prover shared by the proving workers (a CPU prover, or one GPU).
pub type SharedProver = Arc<dyn Prover + Send + Sync>;

/// How many proving workers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workers {
    /// As many as every prover works on at once ([`Prover::in_flight`]: a GPU prover's lanes
    /// and the proofs that prepare ahead of them, 1 for the CPU prover).
    Auto,
    /// This many, spread over the provers in turn. More than the provers' lanes only queue
    /// inside the provers (a worker waits for a free lane).
    Fixed(usize),
}

/// How a [`Scheduler`] runs its batches.
#[derive(Debug, Clone, Copy)]
pub struct Config {
    /// Threads of the CPU (witness) stage per batch.
    pub cpu_threads: usize,
    /// Witnesses that may wait between the stages. With `cpu_threads` and the workers it
    /// bounds the witnesses in memory: `queue_depth + cpu_threads + workers`, whatever the
    /// number of jobs submitted.
    pub queue_depth: usize,
    /// Proving workers.
    pub workers: Workers,
    /// Options of every proof (verification on by default: no unverified proof is returned).
    pub options: ProveOptions,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            cpu_threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            // Two witnesses per worker would be enough to hide the hand-over; a small constant
            // keeps host memory predictable at large sizes (a 2^27 witness is ~4 GiB).
            queue_depth: 2,
            workers: Workers::Auto,
            options: ProveOptions::default(),
        }
    }
}

/// Takes batches of equally shaped jobs and proves them on its provers.
pub struct Scheduler {
    provers: Arc<Vec<SharedProver>>,
    /// Per prover: retired after a sticky device error (for the scheduler's life: its CUDA
    /// context is unusable until the process ends).
    retired: Arc<Vec<AtomicBool>>,
    config: Config,
    next_id: AtomicU64,
}

impl std::fmt::Debug for Scheduler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<String> = self.provers.iter().map(|p| p.name()).collect();
        f.debug_struct("Scheduler").field("provers", &names).field("config", &self.config).finish()
    }
}

/// One job's result.
#[derive(Debug)]
pub struct JobOutcome {
    /// The job.
    pub job: JobId,
    /// Its position in the submitted batch.
    pub index: usize,
    /// The proof, or why there is none.
    pub result: Result<Proof, JobError>,
    /// Its phases (witness generation counted as synthesis).
    pub timings: Timings,
}

/// A finished batch: every job's outcome in submission order, and the batch's figures.
#[derive(Debug)]
pub struct BatchReport {
    /// One per job, in submission order.
    pub outcomes: Vec<JobOutcome>,
    /// What the batch did.
    pub metrics: Metrics,
}

impl BatchReport {
    /// The proofs in submission order, or the first job's error.
    pub fn into_proofs(self) -> Result<Vec<Proof>, JobError> {
        self.outcomes.into_iter().map(|o| o.result).collect()
    }
}

// A job's state, shared by the stages and `cancel`: a job is cancelled only while pending,
// so `cancel` returning true means it will fail as cancelled (never half proved).
const PENDING: u8 = 0;
const PROVING: u8 = 1;
const CANCELLED: u8 = 2;
const FINISHED: u8 = 3;

/// What the CPU stage takes: a submitted job.
struct Submitted {
    index: usize,
    id: JobId,
    job: Job,
    at: Instant,
}

/// What the proving stage takes: a witness ready to prove.
struct Ready {
    index: usize,
    id: JobId,
    witness: Witness,
    r_s: (Scalar, Scalar),
    deadline: Option<Instant>,
    timings: Timings,
    at: Instant,
}

/// What both stages share for one batch.
struct Batch {
    shape: Arc<Shape>,
    states: Vec<AtomicU8>,
    collector: Collector,
    options: ProveOptions,
    results: Sender<JobOutcome>,
}

impl Batch {
    fn state(&self, index: usize) -> &AtomicU8 {
        &self.states[index]
    }

    fn send(&self, outcome: JobOutcome) {
        // Whatever happened, the job is over: `cancel` can no longer claim it.
        self.state(outcome.index).store(FINISHED, Ordering::SeqCst);
        self.collector.add(|m| {
            if outcome.result.is_ok() {
                m.jobs_done += 1;
            } else {
                m.jobs_failed += 1;
            }
            add_timings(&mut m.timings, &outcome.timings);
        });
        if let Err(e) = &outcome.result {
            tracing::debug!(job = outcome.job, "job failed: {e}");
        }
        // The handle may be gone (dropped without waiting): the outcome has nowhere to go.
        let _ = self.results.send(outcome);
    }

    fn fail(&self, index: usize, id: JobId, error: JobError, timings: Timings) {
        self.send(JobOutcome { job: id, index, result: Err(error), timings });
    }

    /// The error a job gets instead of entering `stage`, if cancelled or past its deadline.
    fn refused(&self, index: usize, id: JobId, deadline: Option<Instant>, stage: Stage) -> Option<JobError> {
        if self.state(index).load(Ordering::SeqCst) == CANCELLED {
            return Some(JobError::Cancelled { job: id, stage });
        }
        let now = Instant::now();
        match deadline {
            Some(d) if d <= now => Some(JobError::DeadlineExpired { job: id, stage, late_by: now - d }),
            _ => None,
        }
    }
}

impl Scheduler {
    /// A scheduler over `provers` (one per device, or one CPU prover).
    ///
    /// # Errors
    /// No prover, or a zero count in `config`.
    pub fn new(provers: Vec<SharedProver>, config: Config) -> Result<Scheduler, SchedError> {
        if provers.is_empty() {
            return Err(SchedError::NoProvers);
        }
        for (what, n) in [("cpu_threads", config.cpu_threads), ("queue_depth", config.queue_depth)] {
            if n == 0 {
                return Err(SchedError::Zero { what });
            }
        }
        if config.workers == Workers::Fixed(0) {
            return Err(SchedError::Zero { what: "workers" });
        }
        let retired = Arc::new(provers.iter().map(|_| AtomicBool::new(false)).collect());
        Ok(Scheduler { provers: Arc::new(provers), retired, config, next_id: AtomicU64::new(0) })
    }

    /// Its configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Its provers (retired ones included).
    pub fn provers(&self) -> &[SharedProver] {
        &self.provers
    }

    /// The prover of each proving worker: with [`Workers::Auto`] each prover once per lane,
    /// with [`Workers::Fixed`] the provers in turn. Retired provers get none.
    pub fn worker_provers(&self) -> Vec<SharedProver> {
        self.worker_slots().into_iter().map(|i| self.provers[i].clone()).collect()
    }

    /// The names of the provers retired after a device failure.
    pub fn retired(&self) -> Vec<String> {
        self.provers
            .iter()
            .zip(self.retired.iter())
            .filter(|(_, r)| r.load(Ordering::SeqCst))
            .map(|(p, _)| p.name())
            .collect()
    }

    /// The prover index of each proving worker (see [`Scheduler::worker_provers`]).
    fn worker_slots(&self) -> Vec<usize> {
        let live: Vec<usize> = (0..self.provers.len()).filter(|&i| !self.retired[i].load(Ordering::SeqCst)).collect();
        if live.is_empty() {
            return live;
        }
        match self.config.workers {
            Workers::Auto => {
                live.iter().flat_map(|&i| std::iter::repeat_n(i, self.provers[i].in_flight().max(1))).collect()
            }
            Workers::Fixed(n) => (0..n).map(|k| live[k % live.len()]).collect(),
        }
    }

    /// Starts proving `jobs`, all of `shape` (recorded once: [`Shape::record`]); returns at
    /// once. Results come through the handle, as they complete ([`BatchHandle::recv`]) or all
    /// in submission order ([`BatchHandle::wait`]).
    ///
    /// # Errors
    /// A stage's thread could not be started (jobs already started fail as lost).
    pub fn submit(&self, shape: Arc<Shape>, jobs: Vec<Job>) -> Result<BatchHandle, SchedError> {
        let started = Instant::now();
        let n = jobs.len();
        let first = self.next_id.fetch_add(n as u64, Ordering::Relaxed);
        let ids: Vec<JobId> = (first..first + n as u64).collect();
        // Never more threads than jobs: a batch of one needs one of each.
        let cpu_threads = self.config.cpu_threads.min(n).max(1);
        let mut slots = self.worker_slots();
        if slots.is_empty() {
            return Err(SchedError::AllRetired { retired: self.retired().join(", ") });
        }
        slots.truncate(n.max(1));
        let (results_tx, results) = channel::unbounded();
        let batch = Arc::new(Batch {
            shape,
            states: (0..n).map(|_| AtomicU8::new(PENDING)).collect(),
            collector: Collector::new(started),
            options: self.config.options,
            results: results_tx,
        });
        batch.collector.add(|m| {
            m.jobs = n;
            m.cpu_threads = cpu_threads;
            m.workers = slots.len();
            m.queue_depth = self.config.queue_depth;
        });
        // Jobs are held by the feed (they are the caller's circuits); witnesses, the large
        // part, exist only between the CPU stage and the end of their proof.
        let (feed_tx, feed) = channel::unbounded();
        for (index, (job, &id)) in jobs.into_iter().zip(&ids).enumerate() {
            feed_tx.send(Submitted { index, id, job, at: started }).expect("the feed's receiver is held here");
        }
        drop(feed_tx);
        let (ready_tx, ready) = channel::bounded(self.config.queue_depth);

        // The devices' busy counters (the batch's share is the difference at the end) and
        // memory now.
        let devices = self
            .provers
            .iter()
            .filter_map(|p| p.device_busy().map(|busy| (p.clone(), busy, p.device_memory())))
            .collect();
        let mut handle = BatchHandle {
            ids,
            devices,
            batch: batch.clone(),
            results,
            threads: Vec::new(),
            started,
            received: 0,
            delivered: vec![false; n],
        };
        for t in 0..cpu_threads {
            let (feed, ready_tx, batch) = (feed.clone(), ready_tx.clone(), batch.clone());
            let spawned = std::thread::Builder::new()
                .name(format!("kiln-sched-cpu-{t}"))
                .spawn(move || witness_stage(&batch, &feed, &ready_tx))
                .map_err(|source| SchedError::Spawn { stage: Stage::Witness, source })?;
            handle.threads.push(spawned);
        }
        for (w, slot) in slots.into_iter().enumerate() {
            let (ready, batch) = (ready.clone(), batch.clone());
            let prover = self.provers[slot].clone();
            let fleet = Fleet { provers: self.provers.clone(), retired: self.retired.clone(), slot };
            let spawned = std::thread::Builder::new()
                .name(format!("kiln-sched-prove-{w}"))
                .spawn(move || proving_stage(&batch, &ready, &*prover, &fleet))
                .map_err(|source| SchedError::Spawn { stage: Stage::Prove, source })?;
            handle.threads.push(spawned);
        }
        Ok(handle)
    }

    /// [`Scheduler::submit`] and [`BatchHandle::wait`].
    ///
    /// # Errors
    /// As [`Scheduler::submit`]; a job's failure is in its outcome, not here.
    pub fn run(&self, shape: Arc<Shape>, jobs: Vec<Job>) -> Result<BatchReport, SchedError> {
        Ok(self.submit(shape, jobs)?.wait())
    }
}

/// One CPU thread: takes jobs, makes their witnesses, hands them to the proving stage. The
/// bounded queue blocks it when the provers are behind: that is the backpressure.
fn witness_stage(batch: &Batch, feed: &Receiver<Submitted>, ready: &Sender<Ready>) {
    let mut blocked = Duration::ZERO;
    for Submitted { index, id, job, at } in feed.iter() {
        batch.collector.add(|m| m.feed_wait += at.elapsed());
        if let Some(e) = batch.refused(index, id, job.deadline, Stage::Witness) {
            batch.fail(index, id, e, Timings::default());
            continue;
        }
        let r_s = job.randomness.resolve();
        let deadline = job.deadline;
        let start = Instant::now();
        // The circuit is the caller's code: a panic in it fails this job only.
        let made = catch_unwind(AssertUnwindSafe(|| (job.witness)(&batch.shape)));
        let timings = Timings { synthesis: start.elapsed(), ..Timings::default() };
        let witness = match made {
            Ok(Ok(w)) => w,
            Ok(Err(source)) => {
                batch.fail(index, id, JobError::Witness { job: id, source }, timings);
                continue;
            }
            Err(p) => {
                let message = panic_message(&*p);
                batch.fail(index, id, JobError::Panicked { job: id, stage: Stage::Witness, message }, timings);
                continue;
            }
        };
        batch.collector.witness_made();
        let wait = Instant::now();
        let sent = ready.send(Ready { index, id, witness, r_s, deadline, timings, at: Instant::now() });
        blocked += wait.elapsed();
        batch.collector.queue_length(ready.len());
        if let Err(channel::SendError(lost)) = sent {
            // Every proving worker is gone: nothing will prove it.
            batch.collector.witness_dropped();
            batch.fail(lost.index, lost.id, JobError::Lost { job: lost.id }, lost.timings);
        }
    }
    batch.collector.add(|m| m.backpressure_wait += blocked);
}

/// A proving worker's view of the scheduler's provers: its own (by slot), which are retired,
/// and the others a job moves to when its device is lost.
struct Fleet {
    provers: Arc<Vec<SharedProver>>,
    retired: Arc<Vec<AtomicBool>>,
    slot: usize,
}

impl Fleet {
    fn is_retired(&self) -> bool {
        self.retired[self.slot].load(Ordering::SeqCst)
    }

    /// Retires the prover in `slot`; whether this call did it (not another worker before).
    fn retire(&self, slot: usize) -> bool {
        !self.retired[slot].swap(true, Ordering::SeqCst)
    }

    /// Retires the prover in `slot` after `error` (a lost device) and says so, once.
    fn retire_after(&self, batch: &Batch, slot: usize, job: JobId, error: &kiln_groth16::Groth16Error) {
        if self.retire(slot) {
            let name = self.provers[slot].name();
            tracing::error!(prover = %name, job, %error, "device lost: its prover is retired, the others go on");
            batch.collector.add(|m| m.retired.push(name));
        }
    }

    /// The provers not retired, other than this worker's, in order.
    fn others_live(&self) -> impl Iterator<Item = (usize, &SharedProver)> {
        self.provers.iter().enumerate().filter(|&(i, _)| i != self.slot && !self.retired[i].load(Ordering::SeqCst))
    }
}

/// One proof of `witness` on `prover`, a panic in it caught as the job's error.
fn prove_one(
    batch: &Batch,
    prover: &(dyn Prover + Send + Sync),
    id: JobId,
    witness: &Witness,
    r_s: (Scalar, Scalar),
    timings: &mut Timings,
) -> Result<Proof, Attempt> {
    let mut t = Timings { on_gpu: prover.on_gpu(), ..Timings::default() };
    let proved = catch_unwind(AssertUnwindSafe(|| {
        prove_witnesses(prover, &batch.shape, std::slice::from_ref(witness), &[r_s], batch.options, &mut t)
    }));
    add_timings(timings, &t);
    match proved {
        Ok(Ok(mut proofs)) => Ok(proofs.remove(0)),
        Ok(Err(source)) if source.is_device_lost() => Err(Attempt::DeviceLost(source)),
        Ok(Err(source)) => Err(Attempt::Failed(JobError::Prove { job: id, prover: prover.name(), source })),
        Err(p) => {
            Err(Attempt::Failed(JobError::Panicked { job: id, stage: Stage::Prove, message: panic_message(&*p) }))
        }
    }
}

/// Why one proof attempt gave no proof.
enum Attempt {
    /// The prover's device is lost (a sticky error): the job may move to another prover.
    DeviceLost(kiln_groth16::Groth16Error),
    /// The job's own failure (its error, a panic): final.
    Failed(JobError),
}

/// One proving worker: takes witnesses one at a time and proves each with one call of
/// [`prove_witnesses`] (a GPU prover takes a lane per call). A sticky device error retires
/// its prover: the job moves to the provers left (each waits for a lane of its own), this
/// worker and the prover's others stop, the other provers' go on.
fn proving_stage(batch: &Batch, ready: &Receiver<Ready>, prover: &(dyn Prover + Send + Sync), fleet: &Fleet) {
    let mut starved = Duration::ZERO;
    loop {
        if fleet.is_retired() {
            break;
        }
        let wait = Instant::now();
        let Ok(item) = ready.recv() else { break };
        starved += wait.elapsed();
        let Ready { index, id, witness, r_s, deadline, mut timings, at } = item;
        batch.collector.add(|m| m.queue_wait += at.elapsed());
        let refused = batch.refused(index, id, deadline, Stage::Prove).or_else(|| {
            // From here on `cancel` cannot take the job back: it is being proved.
            let claimed = batch.state(index).compare_exchange(PENDING, PROVING, Ordering::SeqCst, Ordering::SeqCst);
            claimed.err().map(|_| JobError::Cancelled { job: id, stage: Stage::Prove })
        });
        if let Some(e) = refused {
            drop(witness);
            batch.collector.witness_dropped();
            batch.fail(index, id, e, timings);
            continue;
        }
        let proving = batch.collector.proving();
        let mut attempt = prove_one(batch, prover, id, &witness, r_s, &mut timings);
        let device_lost = matches!(attempt, Err(Attempt::DeviceLost(_)));
        if let Err(Attempt::DeviceLost(source)) = &attempt {
            fleet.retire_after(batch, fleet.slot, id, source);
        }
        if device_lost {
            for (slot, other) in fleet.others_live() {
                let again = prove_one(batch, &**other, id, &witness, r_s, &mut timings);
                if let Err(Attempt::DeviceLost(lost)) = &again {
                    fleet.retire_after(batch, slot, id, lost);
                    continue;
                }
                if again.is_ok() {
                    batch.collector.add(|m| m.jobs_moved += 1);
                }
                attempt = again;
                break;
            }
        }
        drop(proving);
        let result = attempt.map_err(|a| match a {
            // No prover left to take it: the job fails with the first device's error.
            Attempt::DeviceLost(source) => JobError::Prove { job: id, prover: prover.name(), source },
            Attempt::Failed(e) => e,
        });
        batch.send(JobOutcome { job: id, index, result, timings });
        // Freed after the result is out: returning a witness's pages (half a GiB at 2^24) to
        // the system takes tens of milliseconds the caller need not wait for.
        drop(witness);
        batch.collector.witness_dropped();
        if device_lost {
            break;
        }
    }
    batch.collector.add(|m| m.starved_wait += starved);
}

/// A submitted batch in progress: its results, cancellation, and at the end its figures.
/// Dropped before [`BatchHandle::wait`], it cancels the jobs not yet being proved.
pub struct BatchHandle {
    ids: Vec<JobId>,
    /// Each device prover, its busy counter and its memory at submission.
    devices: Vec<(SharedProver, Duration, Option<DeviceMemoryUse>)>,
    batch: Arc<Batch>,
    results: Receiver<JobOutcome>,
    threads: Vec<JoinHandle<()>>,
    started: Instant,
    /// Outcomes returned so far (by `recv`), and which jobs they were.
    received: usize,
    delivered: Vec<bool>,
}

impl std::fmt::Debug for BatchHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BatchHandle").field("ids", &self.ids).field("received", &self.received).finish()
    }
}

impl BatchHandle {
    /// The jobs' ids, in submission order.
    pub fn ids(&self) -> &[JobId] {
        &self.ids
    }

    /// Cancels `job` if it is of this batch and its proving has not started: then it fails
    /// with [`JobError::Cancelled`] and `true` is returned. A proof already being made is
    /// finished, and a job with a result keeps it (`false`).
    pub fn cancel(&self, job: JobId) -> bool {
        let Some(index) = self.ids.iter().position(|&id| id == job) else { return false };
        self.batch.state(index).compare_exchange(PENDING, CANCELLED, Ordering::SeqCst, Ordering::SeqCst).is_ok()
    }

    /// The next job to finish (completion order), or `None` once every job's outcome was
    /// returned (by this or by [`BatchHandle::wait`]).
    pub fn recv(&mut self) -> Option<JobOutcome> {
        while self.received < self.ids.len() {
            match self.results.recv_timeout(Duration::from_millis(50)) {
                Ok(o) => {
                    self.received += 1;
                    self.delivered[o.index] = true;
                    return Some(o);
                }
                // The batch holds the sending side, so the channel stays open: a stage thread
                // that ended without a result (it cannot, every job is under catch_unwind, but
                // a hang here would hide it) is seen through the threads.
                Err(_) if self.threads.iter().all(|t| t.is_finished()) => {
                    let o = self.results.try_recv().ok()?;
                    self.received += 1;
                    self.delivered[o.index] = true;
                    return Some(o);
                }
                Err(_) => {}
            }
        }
        None
    }

    /// Waits for every job; returns the outcomes not already taken with
    /// [`BatchHandle::recv`], in submission order, and the batch's figures.
    pub fn wait(mut self) -> BatchReport {
        let mut outcomes = Vec::with_capacity(self.ids.len() - self.received);
        while let Some(o) = self.recv() {
            outcomes.push(o);
        }
        let ended = Instant::now();
        let wall = ended.saturating_duration_since(self.started);
        for t in std::mem::take(&mut self.threads) {
            // Their panics are caught per job; a join error would be the scheduler's own bug.
            if t.join().is_err() {
                tracing::error!("a kiln-sched stage thread panicked outside a job");
            }
        }
        // Only if a stage thread died: those jobs are reported lost rather than waited for.
        let mut lost = 0;
        for (index, &id) in self.ids.iter().enumerate() {
            if !self.delivered[index] {
                lost += 1;
                let error = JobError::Lost { job: id };
                outcomes.push(JobOutcome { job: id, index, result: Err(error), timings: Timings::default() });
            }
        }
        outcomes.sort_by_key(|o| o.index);
        let mut metrics = self.batch.collector.finish(wall);
        metrics.jobs_failed += lost;
        metrics.devices = self
            .devices
            .iter()
            .map(|(p, before, memory)| DeviceBusy {
                name: p.name(),
                busy: p.device_busy().unwrap_or(*before).saturating_sub(*before),
                idle_edges: p.device_idle_edges(self.started, ended),
                memory: memory.zip(p.device_memory()).map(|(start, end)| BatchMemory { start, end }),
            })
            .collect();
        BatchReport { outcomes, metrics }
    }
}

impl Drop for BatchHandle {
    fn drop(&mut self) {
        // Nobody will read the rest: stop the jobs not yet being proved.
        for state in &self.batch.states {
            let _ = state.compare_exchange(PENDING, CANCELLED, Ordering::SeqCst, Ordering::SeqCst);
        }
    }
}
