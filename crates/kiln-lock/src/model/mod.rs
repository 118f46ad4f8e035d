//! The device model and the scenario simulator.
//!
//! [`DeviceModel`] is the device: capacity, a stream-ordered pool, streams and engines in
//! simulated time. [`run`] plays a [`Scenario`] — W workers, each a sequence of partitions
//! (CPU prep → memory phase → compute phase → CPU epilogue) — under any [`LockPolicy`],
//! calling the policy's own `try_enter`/`leave`/`check_device_global`, and returns a
//! [`Report`]. Deterministic: no threads, no clocks; workers act in index order at equal times.

mod device;
mod host;

pub use device::{ComputeSharing, DeviceModel, Engine, Micros, OpId, OutOfMemory, StreamId};
pub use host::HostModel;

use std::cell::RefCell;
use std::fmt;
use std::rc::Rc;

use self::host::{Host, TaskId, TaskKind};
use crate::policy::{Lanes, LockError, LockPolicy, MemoryStrategy, Section, WorkerId};

/// Microseconds per millisecond, for writing scenarios.
pub const MS: Micros = 1_000;
/// One GiB.
pub const GIB: u64 = 1 << 30;

/// One partition's durations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Partition {
    /// CPU preparation (no lock): with a witness stage, the witness's synthesis.
    pub prep: Micros,
    /// CPU work after the witness and before the memory phase, holding no lane: a proof that
    /// prepares ahead (kiln's GPU prover, in a spare host set, stages its scalars and evaluates
    /// a, b, c while every lane is busy). 0 where that work is done on the lane.
    pub ahead: Micros,
    /// Memory phase: CPU time in the section, and the staging copy it queues (same length).
    pub memory: Micros,
    /// Compute phase: the kernels it queues.
    pub compute: Micros,
    /// CPU epilogue, after waiting for the partition's results.
    pub epilogue: Micros,
}

impl Partition {
    /// ARCHITECTURE.md §1's measured partition: prep 1.9 s, memory 18 ms, compute 1.8 s, epilogue 10 ms.
    pub const SECTION1: Partition =
        Partition { prep: 1_900 * MS, ahead: 0, memory: 18 * MS, compute: 1_800 * MS, epilogue: 10 * MS };
}

/// A workload on one device.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Device memory, bytes (what `cuMemGetInfo` reports free at start).
    pub capacity: u64,
    /// Working set of one worker's partition (arena size under kiln's policy).
    pub bytes_per_worker: u64,
    /// Per worker, its partitions in order.
    pub work: Vec<Vec<Partition>>,
    /// The pool's release threshold (CUDA's default: 0).
    pub release_threshold: u64,
    /// How long a worker backs off after an out-of-memory before retrying its memory phase.
    pub retry_after: Micros,
    /// Under lanes: worker 0 takes the device exclusively (synchronize + trim, a re-plan)
    /// after every `n`-th of its partitions.
    pub replan_every: Option<usize>,
    /// kiln-sched's schedule: a shared pool of CPU threads makes every partition's `prep` (the
    /// witness) into a bounded queue, and workers take ready witnesses from it instead of
    /// preparing their own. `None`: each worker preps its own partitions in turn.
    pub witness_stage: Option<WitnessStage>,
    /// How the lanes' kernels share the GPU: in turn (the §1 scenarios, whose compute phases
    /// were mostly host waits) or at once (kiln's compute phases since their scalars are staged
    /// in page-locked memory: almost all kernels, so two lanes split the SMs).
    pub compute_sharing: ComputeSharing,
    /// The host's cores, shared by every CPU activity of the run (the first scenario's, for a
    /// run of several devices). `None`: each CPU activity on cores of its own.
    pub host: Option<HostModel>,
}

/// The CPU stage of kiln-sched's orchestrator: `cpu_threads` threads make witnesses (one
/// partition's `prep` each, in the order workers take them), a thread with a finished witness
/// waits while `queue_depth` witnesses already wait in the queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WitnessStage {
    /// Threads making witnesses.
    pub cpu_threads: usize,
    /// Finished witnesses that may wait for a worker.
    pub queue_depth: usize,
}

impl Scenario {
    /// `workers` workers, each running `partitions` copies of `partition`.
    pub fn uniform(
        capacity: u64,
        bytes_per_worker: u64,
        workers: usize,
        partitions: usize,
        partition: Partition,
    ) -> Self {
        Scenario {
            capacity,
            bytes_per_worker,
            work: vec![vec![partition; partitions]; workers],
            release_threshold: 0,
            retry_after: 100 * MS,
            replan_every: None,
            witness_stage: None,
            compute_sharing: ComputeSharing::Serial,
            host: None,
        }
    }

    /// kiln-sched's schedule on one device: `jobs` partitions spread over `workers` proving
    /// workers (round robin, as a shared queue hands them out when partitions are alike), their
    /// witnesses made by `stage`.
    pub fn orchestrated(
        capacity: u64,
        bytes_per_worker: u64,
        workers: usize,
        jobs: usize,
        partition: Partition,
        stage: WitnessStage,
    ) -> Self {
        let per = |w: usize| jobs / workers + usize::from(w < jobs % workers);
        let mut s = Scenario::uniform(capacity, bytes_per_worker, workers, 0, partition);
        s.work = (0..workers).map(|w| vec![partition; per(w)]).collect();
        s.witness_stage = Some(stage);
        s
    }

    /// ARCHITECTURE.md §1: three workers of 12 GiB, ten §1 partitions each, on a card of `card_gib`.
    pub fn section1(card_gib: u64) -> Self {
        Scenario::uniform(card_gib * GIB, 12 * GIB, 3, 10, Partition::SECTION1)
    }

    /// How many lanes kiln's plan gives this scenario: as many arenas as fit, at most one per worker.
    pub fn kiln_lanes(&self) -> Result<Lanes, SimError> {
        let fit = usize::try_from(self.capacity / self.bytes_per_worker.max(1)).unwrap_or(usize::MAX);
        let lanes = fit.min(self.work.len());
        if lanes == 0 {
            return Err(SimError::NothingFits { capacity: self.capacity, bytes_per_worker: self.bytes_per_worker });
        }
        Lanes::new(lanes).map_err(SimError::Lock)
    }
}

/// What a run measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// The policy's name.
    pub policy: &'static str,
    /// Time until the last worker finished its last epilogue.
    pub makespan: Micros,
    /// Fraction of the makespan the compute engine was busy.
    pub gpu_busy: f64,
    /// Most device memory taken at once.
    pub peak_bytes: u64,
    /// Allocations that failed.
    pub ooms: u32,
    /// Memory phases that found less free memory than they needed after their trim.
    pub fallbacks: u32,
    /// CPU time workers spent blocked in device-global synchronizes or backing off after an OOM.
    pub stall: Micros,
    /// Device-global operations issued while another worker was inside a memory/compute
    /// section or had work on the device.
    pub global_overlaps: u32,
    /// Partitions completed.
    pub partitions: usize,
    /// Lanes, under a lane policy.
    pub lanes: Option<usize>,
    /// The first notable events (OOMs, fallbacks, overlaps), for humans.
    pub notes: Vec<String>,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{}: makespan {:.2} s, GPU busy {:.1}%, peak {:.1} GiB, {} OOM, {} fallbacks, stalled {:.2} s, {} device-global overlaps, {} partitions{}",
            self.policy,
            self.makespan as f64 / 1e6,
            self.gpu_busy * 100.0,
            self.peak_bytes as f64 / GIB as f64,
            self.ooms,
            self.fallbacks,
            self.stall as f64 / 1e6,
            self.global_overlaps,
            self.partitions,
            self.lanes.map(|l| format!(", {l} lanes")).unwrap_or_default()
        )?;
        for n in &self.notes {
            writeln!(f, "  {n}")?;
        }
        Ok(())
    }
}

/// Why a run could not complete.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SimError {
    /// Workers wait for each other and nothing else can happen.
    #[error("deadlock at t = {time} µs: {blocked:?}")]
    Deadlock {
        /// Simulated time.
        time: Micros,
        /// The blocked workers and what they wait for.
        blocked: Vec<(WorkerId, String)>,
    },
    /// The policy reported misuse.
    #[error(transparent)]
    Lock(#[from] LockError),
    /// Not even one worker's working set fits: kiln's plan refuses (the streamed plan is the answer).
    #[error("not one worker fits: {bytes_per_worker} B per worker on a {capacity} B device")]
    NothingFits {
        /// Device capacity.
        capacity: u64,
        /// Bytes one worker needs.
        bytes_per_worker: u64,
    },
    /// Out-of-memory retries went on without end.
    #[error("gave up after {retries} out-of-memory retries at t = {time} µs")]
    GaveUp {
        /// Retries so far.
        retries: u32,
        /// Simulated time.
        time: Micros,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Cpu(Micros),
    /// Take a ready witness from the witness stage (blocks until one is queued).
    TakeWitness,
    Enter(Section),
    Leave(Section),
    Synchronize,
    Trim,
    /// Per-partition pool allocation; on OOM go back to step `retry`.
    AllocPartition {
        check_free: bool,
        retry: usize,
    },
    AllocArenas(u64),
    Stage(Micros),
    Kernel(Micros),
    FreePartition,
    WaitLast,
    PartitionDone,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Ready,
    Sleep(Micros),
    /// Running a CPU task on the host.
    Cpu(TaskId),
    WaitOp(OpId),
    WaitIdle(Micros),
    Blocked,
    Done,
}

struct Worker {
    program: Vec<Step>,
    pc: usize,
    state: State,
    last_op: Option<OpId>,
    alloc_stream: Option<StreamId>,
    in_lane: bool,
}

fn program(scenario: &Scenario, w: WorkerId, strategy: MemoryStrategy, lanes: Option<usize>) -> Vec<Step> {
    let mut p = Vec::new();
    if strategy == MemoryStrategy::Arenas && w == 0 {
        // Start-up: the one time arenas are allocated, with the device to itself.
        let arenas = scenario.bytes_per_worker * lanes.unwrap_or(1) as u64;
        p.extend([
            Step::Enter(Section::Exclusive),
            Step::Synchronize,
            Step::Trim,
            Step::AllocArenas(arenas),
            Step::Leave(Section::Exclusive),
        ]);
    }
    for (i, part) in scenario.work[w].iter().enumerate() {
        p.push(if scenario.witness_stage.is_some() { Step::TakeWitness } else { Step::Cpu(part.prep) });
        if part.ahead > 0 {
            p.push(Step::Cpu(part.ahead));
        }
        let retry = p.len();
        p.push(Step::Enter(Section::Memory));
        match strategy {
            MemoryStrategy::SyncTrimAllocPerPartition => {
                p.extend([Step::Synchronize, Step::Trim, Step::AllocPartition { check_free: false, retry }])
            }
            MemoryStrategy::TrimAllocPerPartition => {
                p.extend([Step::Trim, Step::AllocPartition { check_free: true, retry }])
            }
            MemoryStrategy::Arenas => {}
        }
        p.extend([Step::Cpu(part.memory), Step::Stage(part.memory), Step::Leave(Section::Memory)]);
        p.extend([Step::Enter(Section::Compute), Step::Kernel(part.compute)]);
        if strategy == MemoryStrategy::Arenas {
            // kiln's prover holds its lane until the partition's sums are read back: the lane's
            // arena and page-locked buffers are the partition's until then.
            p.extend([Step::WaitLast, Step::Leave(Section::Compute)]);
        } else {
            p.extend([Step::FreePartition, Step::Leave(Section::Compute), Step::WaitLast]);
        }
        p.extend([Step::Cpu(part.epilogue), Step::PartitionDone]);
        if strategy == MemoryStrategy::Arenas
            && w == 0
            && scenario.replan_every.is_some_and(|n| n > 0 && (i + 1) % n == 0)
        {
            p.extend([Step::Enter(Section::Exclusive), Step::Synchronize, Step::Trim, Step::Leave(Section::Exclusive)]);
        }
    }
    p
}

struct Sim<'a, P> {
    scenario: &'a Scenario,
    policy: P,
    device: DeviceModel,
    workers: Vec<Worker>,
    report: Report,
    retries: u32,
    /// The witness stage, shared by every device of a run ([`run_devices`]).
    stage: Option<Rc<RefCell<Stage>>>,
    /// The host's cores, shared likewise.
    host: Rc<RefCell<Host>>,
}

/// The witness stage in simulated time.
struct Stage {
    /// Each thread: making a witness (a task on the host), holding a finished one (waiting
    /// for room in the queue), or idle.
    threads: Vec<Producer>,
    queued: usize,
    queue_depth: usize,
    /// The `prep` of each witness still to start, in the order they are made.
    to_make: std::collections::VecDeque<Micros>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Producer {
    Idle,
    Making(TaskId),
    Holding,
}

impl Stage {
    fn new(scenarios: &[Scenario], s: WitnessStage) -> Stage {
        // Witnesses are taken in time order across workers; with alike partitions the order
        // of their preps does not matter, so take them worker by worker.
        let to_make = scenarios.iter().flat_map(|sc| sc.work.iter().flatten()).map(|p| p.prep).collect();
        Stage { threads: vec![Producer::Idle; s.cpu_threads.max(1)], queued: 0, queue_depth: s.queue_depth, to_make }
    }

    /// Moves every thread as far as it can at the host's current time; whether anything changed.
    fn advance(&mut self, host: &mut Host) -> bool {
        let mut changed = false;
        for t in 0..self.threads.len() {
            loop {
                let next = match self.threads[t] {
                    Producer::Making(task) if host.is_done(task) => Producer::Holding,
                    Producer::Holding if self.queued < self.queue_depth => {
                        self.queued += 1;
                        Producer::Idle
                    }
                    Producer::Idle => match self.to_make.pop_front() {
                        Some(d) => Producer::Making(host.start(TaskKind::Witness, d)),
                        None => break,
                    },
                    _ => break,
                };
                self.threads[t] = next;
                changed = true;
            }
        }
        changed
    }
}

const MAX_NOTES: usize = 8;
const MAX_RETRIES: u32 = 100_000;

impl<P: LockPolicy> Sim<'_, P> {
    fn note(&mut self, what: String) {
        if self.report.notes.len() < MAX_NOTES {
            self.report.notes.push(format!("t={:.3}s {what}", self.device.now() as f64 / 1e6));
        }
    }

    fn stream_of(&self, w: WorkerId) -> StreamId {
        // Under lanes the stream is the lane's (its arena is ordered by it); else the worker's own.
        self.policy.lane_of(w).unwrap_or(w)
    }

    /// The runtime check plus the model's own overlap detector for a device-global op.
    fn device_global(&mut self, w: WorkerId, op: &'static str) -> Result<(), SimError> {
        self.policy.check_device_global(w, op)?;
        let other_in_section = self.workers.iter().enumerate().any(|(i, o)| i != w && o.in_lane);
        let other_work = op != "cuCtxSynchronize" && self.device.has_work_of_others(w);
        if other_in_section || other_work {
            self.report.global_overlaps += 1;
            self.note(format!(
                "worker {w}: {op} while {}",
                if other_in_section {
                    "another worker is in its memory/compute phase"
                } else {
                    "another worker's work is queued"
                }
            ));
        }
        Ok(())
    }

    /// Abandons the memory phase after an OOM: releases everything the policy holds for `w`.
    fn abandon(&mut self, w: WorkerId) -> Result<(), SimError> {
        self.policy.leave(w, Section::Memory)?;
        if self.policy.try_enter(w, Section::Compute).unwrap_or(false) {
            self.policy.leave(w, Section::Compute)?;
        }
        self.workers[w].in_lane = false;
        Ok(())
    }

    /// Advances worker `w` by one action; `Ok(true)` if anything changed.
    fn step(&mut self, w: WorkerId) -> Result<bool, SimError> {
        let now = self.device.now();
        match self.workers[w].state {
            State::Done => return Ok(false),
            State::Sleep(t) if t > now => return Ok(false),
            State::Cpu(task) if !self.host.borrow().is_done(task) => return Ok(false),
            State::WaitOp(op) if !self.device.is_done(op) => return Ok(false),
            State::WaitIdle(_) if !self.device.idle() => return Ok(false),
            State::Sleep(_) | State::Cpu(_) => self.workers[w].state = State::Ready,
            State::WaitOp(_) => {
                self.device.sync_point();
                self.workers[w].state = State::Ready;
            }
            State::WaitIdle(since) => {
                self.report.stall += now - since;
                self.device.sync_point();
                self.workers[w].state = State::Ready;
            }
            State::Ready | State::Blocked => {}
        }
        let Some(&step) = self.workers[w].program.get(self.workers[w].pc) else {
            self.workers[w].state = State::Done;
            return Ok(true);
        };
        let was_blocked = self.workers[w].state == State::Blocked;
        let mut next = self.workers[w].pc + 1;
        match step {
            Step::Cpu(d) => self.workers[w].state = State::Cpu(self.host.borrow_mut().start(TaskKind::Lane, d)),
            Step::TakeWitness => {
                let stage = self.stage.as_ref().expect("TakeWitness only with a witness stage");
                let mut stage = stage.borrow_mut();
                if stage.queued == 0 {
                    self.workers[w].state = State::Blocked;
                    return Ok(!was_blocked);
                }
                stage.queued -= 1;
                self.workers[w].state = State::Ready;
            }
            Step::Enter(section) => {
                if !self.policy.try_enter(w, section)? {
                    self.workers[w].state = State::Blocked;
                    return Ok(!was_blocked);
                }
                self.workers[w].state = State::Ready;
                if section == Section::Memory {
                    self.workers[w].in_lane = true;
                }
            }
            Step::Leave(section) => {
                self.policy.leave(w, section)?;
                if section == Section::Compute {
                    self.workers[w].in_lane = false;
                }
            }
            Step::Synchronize => {
                self.device_global(w, "cuCtxSynchronize")?;
                self.workers[w].state = State::WaitIdle(now);
            }
            Step::Trim => {
                self.device_global(w, "cuMemPoolTrimTo")?;
                self.device.trim(0);
            }
            Step::AllocPartition { check_free, retry } => {
                let need = self.scenario.bytes_per_worker;
                let free = self.device.mem_get_info() + self.device.pool_unused();
                if check_free && free < need {
                    self.report.fallbacks += 1;
                    self.note(format!(
                        "worker {w}: after its trim sees {:.1} GiB free, needs {:.1} GiB: falls back to the unstaged path",
                        free as f64 / GIB as f64,
                        need as f64 / GIB as f64
                    ));
                }
                let s = self.stream_of(w);
                match self.device.alloc_async(s, need) {
                    Ok(()) => self.workers[w].alloc_stream = Some(s),
                    Err(oom) => {
                        self.report.ooms += 1;
                        self.retries += 1;
                        if self.retries > MAX_RETRIES {
                            return Err(SimError::GaveUp { retries: self.retries, time: now });
                        }
                        self.note(format!(
                            "worker {w}: out of memory asking {:.1} GiB with {:.1} GiB available",
                            oom.requested as f64 / GIB as f64,
                            oom.available as f64 / GIB as f64
                        ));
                        self.abandon(w)?;
                        self.report.stall += self.scenario.retry_after;
                        self.workers[w].state = State::Sleep(now + self.scenario.retry_after);
                        next = retry;
                    }
                }
            }
            Step::AllocArenas(bytes) => {
                self.device_global(w, "cuMemAlloc")?;
                if let Err(oom) = self.device.alloc_sync(bytes) {
                    self.report.ooms += 1;
                    self.note(format!(
                        "worker {w}: arenas of {} B do not fit ({} B free)",
                        oom.requested, oom.available
                    ));
                }
            }
            Step::Stage(d) => {
                let s = self.stream_of(w);
                self.workers[w].last_op = Some(self.device.enqueue(s, Engine::Copy, d, w));
            }
            Step::Kernel(d) => {
                let s = self.stream_of(w);
                self.workers[w].last_op = Some(self.device.enqueue(s, Engine::Compute, d, w));
            }
            Step::FreePartition => {
                let s = self.workers[w].alloc_stream.take().expect("a partition frees what it allocated");
                self.workers[w].last_op = Some(self.device.free_async(s, self.scenario.bytes_per_worker, w));
            }
            Step::WaitLast => {
                if let Some(op) = self.workers[w].last_op {
                    self.workers[w].state = State::WaitOp(op);
                }
            }
            Step::PartitionDone => self.report.partitions += 1,
        }
        self.workers[w].pc = next;
        Ok(true)
    }
}

/// Plays `scenario` under `policy` on a fresh [`DeviceModel`].
pub fn run<P: LockPolicy>(scenario: &Scenario, policy: P) -> Result<Report, SimError> {
    let mut reports = run_devices(std::slice::from_ref(scenario), vec![policy])?;
    Ok(reports.remove(0))
}

/// Plays one scenario per device, each under its own policy, side by side in one simulated
/// time: the machine of several GPUs kiln-sched drives. Scenarios with a witness stage share
/// one (the first scenario's settings): a pool of CPU threads feeding every device's workers.
/// One report per device; the makespan of each is the machine's.
pub fn run_devices<P: LockPolicy>(scenarios: &[Scenario], policies: Vec<P>) -> Result<Vec<Report>, SimError> {
    assert_eq!(scenarios.len(), policies.len(), "one policy per device");
    let stage = scenarios
        .iter()
        .find_map(|s| s.witness_stage)
        .map(|settings| Rc::new(RefCell::new(Stage::new(scenarios, settings))));
    let host = Rc::new(RefCell::new(Host::new(scenarios.iter().find_map(|s| s.host))));
    let mut sims: Vec<Sim<'_, P>> = scenarios
        .iter()
        .zip(policies)
        .map(|(scenario, policy)| {
            let strategy = policy.memory_strategy();
            let lanes = policy.lanes();
            let streams = scenario.work.len().max(lanes.unwrap_or(0));
            let workers = (0..scenario.work.len())
                .map(|w| Worker {
                    program: program(scenario, w, strategy, lanes),
                    pc: 0,
                    state: State::Ready,
                    last_op: None,
                    alloc_stream: None,
                    in_lane: false,
                })
                .collect();
            Sim {
                scenario,
                report: Report {
                    policy: policy.name(),
                    makespan: 0,
                    gpu_busy: 0.0,
                    peak_bytes: 0,
                    ooms: 0,
                    fallbacks: 0,
                    stall: 0,
                    global_overlaps: 0,
                    partitions: 0,
                    lanes,
                    notes: Vec::new(),
                },
                policy,
                device: DeviceModel::new(scenario.capacity, streams, scenario.release_threshold)
                    .with_sharing(scenario.compute_sharing),
                workers,
                retries: 0,
                stage: scenario.witness_stage.and(stage.clone()),
                host: host.clone(),
            }
        })
        .collect();
    loop {
        // Let every worker of every device act until nobody can at this instant.
        loop {
            let mut any = stage.as_ref().is_some_and(|s| s.borrow_mut().advance(&mut host.borrow_mut()));
            for sim in sims.iter_mut() {
                for w in 0..sim.workers.len() {
                    while sim.step(w)? {
                        any = true;
                    }
                }
            }
            if !any {
                break;
            }
        }
        if sims.iter().all(|sim| sim.workers.iter().all(|w| w.state == State::Done)) {
            break;
        }
        let wake = sims
            .iter()
            .flat_map(|sim| {
                sim.workers
                    .iter()
                    .filter_map(|w| if let State::Sleep(t) = w.state { Some(t) } else { None })
                    .chain(sim.device.next_completion())
            })
            .chain(host.borrow().next_completion())
            .min();
        match wake {
            Some(t) => {
                sims.iter_mut().for_each(|sim| sim.device.advance_to(t));
                host.borrow_mut().advance_to(t);
            }
            None => {
                let time = sims.first().map_or(0, |s| s.device.now());
                let blocked = sims
                    .iter()
                    .flat_map(|sim| {
                        sim.workers
                            .iter()
                            .enumerate()
                            .filter(|(_, w)| w.state != State::Done)
                            .map(|(i, w)| (i, format!("{:?} at {:?}", w.state, w.program.get(w.pc))))
                    })
                    .collect();
                return Err(SimError::Deadlock { time, blocked });
            }
        }
    }
    Ok(sims
        .into_iter()
        .map(|mut sim| {
            sim.report.makespan = sim.device.now();
            sim.report.peak_bytes = sim.device.peak_used();
            sim.report.gpu_busy = if sim.report.makespan == 0 {
                0.0
            } else {
                sim.device.compute_busy() as f64 / sim.report.makespan as f64
            };
            sim.report
        })
        .collect())
}

#[cfg(test)]
mod tests;
