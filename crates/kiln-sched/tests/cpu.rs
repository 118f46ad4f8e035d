//! The scheduler end to end on the CPU prover (CI): proofs equal to direct ones, faults
//! contained per job, cancellation, deadlines, bounded memory.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use ff::Field;
use kiln_groth16::circuits::{Builtin, Kind};
use kiln_groth16::synth::Assignment;
use kiln_groth16::{
    CpuProver, Groth16Error, NoProgress, Parameters, PreparedVerifyingKey, ProveOptions, Prover, Scalar, Shape, Sums,
    Timings, Witness, create_proofs_with, random_setup, verify_proof,
};
use kiln_sched::{Config, Job, JobError, Randomness, SchedError, Scheduler, SharedProver, Stage, Workers};
use rand_chacha::ChaCha20Rng;
use rand_chacha::rand_core::SeedableRng;

const SIZE: usize = 1 << 9;

fn circuit(seed: u64) -> Builtin {
    Builtin::new(Kind::Porep, SIZE, seed)
}

/// Parameters and the recorded shape of the small porep circuit, made once per test binary.
fn setup() -> (Arc<Parameters>, Arc<Shape>) {
    static SETUP: OnceLock<(Arc<Parameters>, Arc<Shape>)> = OnceLock::new();
    SETUP
        .get_or_init(|| {
            let params = random_setup(circuit(0), &mut ChaCha20Rng::seed_from_u64(7), &NoProgress).unwrap();
            (Arc::new(params), Arc::new(Shape::record(circuit(0)).unwrap()))
        })
        .clone()
}

fn cpu() -> SharedProver {
    Arc::new(CpuProver::new(setup().0))
}

fn config(cpu_threads: usize, queue_depth: usize, workers: usize) -> Config {
    Config { cpu_threads, queue_depth, workers: Workers::Fixed(workers), ..Config::default() }
}

fn r_s(n: usize) -> Vec<(Scalar, Scalar)> {
    let mut rng = ChaCha20Rng::seed_from_u64(99);
    (0..n).map(|_| (Scalar::random(&mut rng), Scalar::random(&mut rng))).collect()
}

fn verifies(proof: &kiln_groth16::Proof, seed: u64) -> bool {
    let pvk = PreparedVerifyingKey::new(&setup().0.vk);
    verify_proof(&pvk, proof, &circuit(seed).public_inputs()).unwrap()
}

/// A CPU prover with a hook run before each proof's sums (a delay, a gate, a panic).
struct Hooked<F: Fn(&Witness) + Sync + Send> {
    inner: CpuProver,
    hook: F,
}

impl<F: Fn(&Witness) + Sync + Send> Prover for Hooked<F> {
    fn name(&self) -> String {
        "cpu-hooked".into()
    }
    fn parameters(&self) -> &Parameters {
        self.inner.parameters()
    }
    fn sums(&self, assignments: &[Assignment], t: &mut Timings) -> Result<Vec<Sums>, Groth16Error> {
        self.inner.sums(assignments, t)
    }
    fn sums_recorded(&self, shape: &Shape, witnesses: &[Witness], t: &mut Timings) -> Result<Vec<Sums>, Groth16Error> {
        witnesses.iter().for_each(&self.hook);
        self.inner.sums_recorded(shape, witnesses, t)
    }
}

fn hooked(hook: impl Fn(&Witness) + Sync + Send + 'static) -> SharedProver {
    Arc::new(Hooked { inner: CpuProver::new(setup().0), hook })
}

/// A circuit whose synthesis fails (a missing assignment).
struct Failing;

impl Circuit<Scalar> for Failing {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        cs.alloc(|| "x", || Err(SynthesisError::AssignmentMissing))?;
        Ok(())
    }
}

/// A circuit that panics while synthesizing.
struct Panicking;

impl Circuit<Scalar> for Panicking {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, _: &mut CS) -> Result<(), SynthesisError> {
        panic!("test circuit panics on purpose")
    }
}

/// A job whose witness is the circuit's with one aux value changed: same shape, a·b ≠ c.
fn unsatisfied(seed: u64, randomness: Randomness) -> Job {
    let witness = Box::new(move |shape: &Shape| {
        let mut w = shape.witness(circuit(seed))?;
        w.aux[0] += Scalar::ONE;
        Ok(w)
    });
    Job::from_witness_fn(witness, randomness)
}

#[test]
fn ten_partitions_equal_direct_proofs_on_1_2_4_workers() {
    let (params, shape) = setup();
    let r_s = r_s(10);
    let circuits: Vec<Builtin> = (0..10).map(circuit).collect();
    let (direct, _) =
        create_proofs_with(&CpuProver::new(params), circuits.clone(), &r_s, ProveOptions::default()).unwrap();
    for workers in [1, 2, 4] {
        let scheduler = Scheduler::new(vec![cpu()], config(2, 2, workers)).unwrap();
        let jobs = circuits.iter().zip(&r_s).map(|(&c, &(r, s))| Job::new(c, Randomness::Given(r, s))).collect();
        let report = scheduler.run(shape.clone(), jobs).unwrap();
        let m = report.metrics.clone();
        assert_eq!((m.jobs, m.jobs_done, m.jobs_failed, m.workers), (10, 10, 0, workers), "{m:?}");
        assert!(m.busy_fraction() > 0.0 && m.busy_fraction() <= 1.0, "{m:?}");
        assert!(m.peak_queue_depth <= 2, "{m:?}");
        for (i, o) in report.outcomes.iter().enumerate() {
            assert_eq!(o.index, i, "outcomes in submission order");
        }
        let proofs = report.into_proofs().unwrap();
        for (i, (p, d)) in proofs.iter().zip(&direct).enumerate() {
            assert!(verifies(p, i as u64), "workers {workers}: proof {i} does not verify");
            assert_eq!(p.to_bytes(), d.to_bytes(), "workers {workers}: proof {i} differs from the direct proof");
        }
    }
}

#[test]
fn seeded_randomness_is_the_given_one() {
    let (_, shape) = setup();
    let scheduler = Scheduler::new(vec![cpu()], config(1, 1, 1)).unwrap();
    let (r, s) = Randomness::Seed(5).resolve();
    assert_ne!(r, s);
    let jobs = vec![Job::new(circuit(3), Randomness::Seed(5)), Job::new(circuit(3), Randomness::Given(r, s))];
    let proofs = scheduler.run(shape, jobs).unwrap().into_proofs().unwrap();
    assert_eq!(proofs[0].to_bytes(), proofs[1].to_bytes());
}

#[test]
fn unsatisfied_synthesis_error_and_panicking_circuit_fail_only_their_jobs() {
    let (_, shape) = setup();
    let options = ProveOptions { check_satisfied: true, ..ProveOptions::default() };
    let scheduler = Scheduler::new(vec![cpu()], Config { options, ..config(2, 2, 2) }).unwrap();
    let jobs = (0..10u64)
        .map(|i| match i {
            2 => unsatisfied(i, Randomness::Seed(i)),
            5 => Job::new(Failing, Randomness::Seed(i)),
            7 => Job::new(Panicking, Randomness::Seed(i)),
            _ => Job::new(circuit(i), Randomness::Seed(i)),
        })
        .collect();
    let handle = scheduler.submit(shape.clone(), jobs).unwrap();
    let ids = handle.ids().to_vec();
    let report = handle.wait();
    assert_eq!((report.metrics.jobs_done, report.metrics.jobs_failed), (7, 3));
    for (i, o) in report.outcomes.iter().enumerate() {
        assert_eq!(o.job, ids[i]);
        match (i, &o.result) {
            (2, Err(e @ JobError::Prove { source: Groth16Error::Unsatisfied { .. }, .. })) => {
                assert_eq!(e.job(), ids[2])
            }
            (5, Err(e @ JobError::Witness { source: Groth16Error::Synthesis(_), .. })) => assert_eq!(e.job(), ids[5]),
            (7, Err(e @ JobError::Panicked { stage: Stage::Witness, message, .. })) => {
                assert_eq!(e.job(), ids[7]);
                assert!(message.contains("on purpose"), "{message}");
                assert!(e.to_string().contains(&format!("job {}", ids[7])), "{e}");
            }
            (2 | 5 | 7, r) => panic!("job {i}: unexpected {r:?}"),
            (_, Ok(p)) => assert!(verifies(p, i as u64), "proof {i}"),
            (_, Err(e)) => panic!("job {i} failed: {e}"),
        }
    }

    // Without the satisfaction check, the verification of every proof catches it.
    let scheduler = Scheduler::new(vec![cpu()], config(1, 1, 1)).unwrap();
    let report = scheduler.run(shape, vec![unsatisfied(1, Randomness::Seed(1))]).unwrap();
    assert!(
        matches!(report.outcomes[0].result, Err(JobError::Prove { source: Groth16Error::ProofRejected { .. }, .. })),
        "{:?}",
        report.outcomes[0].result
    );
}

#[test]
fn a_panicking_prover_fails_only_its_job_and_the_scheduler_goes_on() {
    let (_, shape) = setup();
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    let prover = hooked(move |_| {
        if counter.fetch_add(1, Ordering::SeqCst) == 3 {
            panic!("prover panics on its fourth proof");
        }
    });
    let scheduler = Scheduler::new(vec![prover], config(2, 2, 2)).unwrap();
    let jobs = || (0..10u64).map(|i| Job::new(circuit(i), Randomness::Seed(i))).collect();
    let report = scheduler.run(shape.clone(), jobs()).unwrap();
    let panicked: Vec<_> = report
        .outcomes
        .iter()
        .filter(|o| matches!(&o.result, Err(JobError::Panicked { stage: Stage::Prove, .. })))
        .collect();
    assert_eq!(panicked.len(), 1, "{:?}", report.outcomes);
    assert_eq!(report.metrics.jobs_done, 9);
    for o in &report.outcomes {
        if let Ok(p) = &o.result {
            assert!(verifies(p, o.index as u64));
        }
    }
    // The same scheduler (and prover) keeps proving.
    let again = scheduler.run(shape, jobs()).unwrap();
    assert_eq!(again.metrics.jobs_done, 10);
}

#[test]
fn cancelled_jobs_are_not_proved() {
    let (_, shape) = setup();
    // One worker held at the gate: nothing is proved until the cancellations are in.
    let gate = Arc::new(AtomicBool::new(false));
    let open = gate.clone();
    let prover = hooked(move |_| {
        while !open.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(1));
        }
    });
    let scheduler = Scheduler::new(vec![prover], config(2, 2, 1)).unwrap();
    let jobs = (0..10u64).map(|i| Job::new(circuit(i), Randomness::Seed(i))).collect();
    let mut handle = scheduler.submit(shape, jobs).unwrap();
    let ids = handle.ids().to_vec();
    assert!(handle.cancel(ids[3]));
    assert!(handle.cancel(ids[8]));
    assert!(!handle.cancel(u64::MAX), "not a job of this batch");
    gate.store(true, Ordering::SeqCst);
    let first = handle.recv().unwrap();
    assert!(!handle.cancel(first.job), "a job with a result cannot be cancelled");
    let mut outcomes = vec![first];
    let report = handle.wait();
    outcomes.extend(report.outcomes);
    outcomes.sort_by_key(|o| o.index);
    assert_eq!(outcomes.len(), 10);
    for o in &outcomes {
        match (o.index, &o.result) {
            (3 | 8, Err(JobError::Cancelled { job, .. })) => assert_eq!(*job, ids[o.index]),
            (3 | 8, r) => panic!("job {}: {r:?}", o.index),
            (i, r) => assert!(verifies(r.as_ref().unwrap(), i as u64)),
        }
    }
}

#[test]
fn expired_deadlines_fail_before_proving() {
    let (_, shape) = setup();
    let scheduler = Scheduler::new(vec![cpu()], config(2, 2, 2)).unwrap();
    let now = Instant::now();
    let jobs = (0..10u64)
        .map(|i| {
            let job = Job::new(circuit(i), Randomness::Seed(i));
            match i {
                1 | 4 => job.with_deadline(now),
                _ => job.with_deadline(now + Duration::from_secs(3600)),
            }
        })
        .collect();
    let report = scheduler.run(shape.clone(), jobs).unwrap();
    assert_eq!((report.metrics.jobs_done, report.metrics.jobs_failed), (8, 2));
    for o in &report.outcomes {
        match (o.index, &o.result) {
            (1 | 4, Err(JobError::DeadlineExpired { stage: Stage::Witness, .. })) => {}
            (1 | 4, r) => panic!("job {}: {r:?}", o.index),
            (i, r) => assert!(verifies(r.as_ref().unwrap(), i as u64)),
        }
    }

    // A deadline that passes while the job waits for the (held) prover: refused there.
    let gate = Arc::new(AtomicBool::new(false));
    let open = gate.clone();
    let prover = hooked(move |_| {
        while !open.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(1));
        }
    });
    let scheduler = Scheduler::new(vec![prover], config(1, 4, 1)).unwrap();
    let soon = Instant::now() + Duration::from_millis(300);
    let jobs =
        vec![Job::new(circuit(0), Randomness::Seed(0)), Job::new(circuit(1), Randomness::Seed(1)).with_deadline(soon)];
    let handle = scheduler.submit(shape, jobs).unwrap();
    std::thread::sleep(Duration::from_millis(600));
    gate.store(true, Ordering::SeqCst);
    let report = handle.wait();
    assert!(report.outcomes[0].result.is_ok());
    assert!(matches!(report.outcomes[1].result, Err(JobError::DeadlineExpired { .. })), "{:?}", report.outcomes[1]);
}

#[test]
fn witnesses_alive_stay_bounded_by_the_queue() {
    let (_, shape) = setup();
    // A slow prover and a fast CPU stage: without the bounded queue every witness would be
    // made up front.
    let prover = hooked(|_| std::thread::sleep(Duration::from_millis(5)));
    let (cpu_threads, queue_depth, workers, jobs) = (3, 2, 1, 40u64);
    let made = Arc::new(AtomicUsize::new(0));
    let scheduler = Scheduler::new(vec![prover], config(cpu_threads, queue_depth, workers)).unwrap();
    let batch = (0..jobs)
        .map(|i| {
            let made = made.clone();
            let witness = Box::new(move |shape: &Shape| {
                made.fetch_add(1, Ordering::SeqCst);
                shape.witness(circuit(i))
            });
            Job::from_witness_fn(witness, Randomness::Seed(i))
        })
        .collect();
    let report = scheduler.run(shape, batch).unwrap();
    let m = &report.metrics;
    assert_eq!(m.jobs_done, jobs as usize);
    assert_eq!(made.load(Ordering::SeqCst), jobs as usize);
    assert!(m.peak_witnesses <= queue_depth + cpu_threads + workers, "{m:?}");
    assert!(m.peak_witnesses >= 1 && m.peak_queue_depth <= queue_depth, "{m:?}");
    assert!(m.backpressure_wait > Duration::ZERO, "the CPU stage was never held back: {m:?}");
    assert!(m.proving_busy <= m.wall, "{m:?}");
}

/// A "device" prover: the CPU prover's sums, with `hold` of device work inside its busy span
/// (as the GPU prover counts its compute phase).
struct ClockedDevice {
    inner: CpuProver,
    hold: Duration,
    busy: kiln_groth16::BusyClock,
    /// Memory readings so far: each reading reports one more MiB in use than the last.
    memory_reads: std::sync::atomic::AtomicU64,
}

const MIB: u64 = 1 << 20;

impl Prover for ClockedDevice {
    fn name(&self) -> String {
        "clocked-device".into()
    }
    fn parameters(&self) -> &Parameters {
        self.inner.parameters()
    }
    fn device_busy(&self) -> Option<Duration> {
        Some(self.busy.total())
    }
    fn device_idle_edges(&self, from: std::time::Instant, to: std::time::Instant) -> Option<kiln_groth16::IdleEdges> {
        self.busy.idle_edges(from, to)
    }
    fn device_memory(&self) -> Option<kiln_groth16::DeviceMemoryUse> {
        let read = self.memory_reads.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Some(kiln_groth16::DeviceMemoryUse { reserved: 64 * MIB, in_use: (100 + read) * MIB, total: 1024 * MIB })
    }
    fn sums(&self, assignments: &[Assignment], t: &mut Timings) -> Result<Vec<Sums>, Groth16Error> {
        self.inner.sums(assignments, t)
    }
    fn sums_recorded(&self, shape: &Shape, witnesses: &[Witness], t: &mut Timings) -> Result<Vec<Sums>, Groth16Error> {
        let sums = self.inner.sums_recorded(shape, witnesses, t)?;
        let _busy = self.busy.enter();
        std::thread::sleep(self.hold);
        Ok(sums)
    }
}

/// Each batch reports its own share of every device's busy time: at least the device work
/// its jobs held, at most the proving stage's busy time; the fill is the wait for the first
/// witness; its memory is read once at submission and once at the end. The CPU prover reports
/// no device.
#[test]
fn device_busy_time_is_measured_per_batch_and_bounded_by_the_proving_stage() {
    let (params, shape) = setup();
    let hold = Duration::from_millis(40);
    let device = Arc::new(ClockedDevice {
        inner: CpuProver::new(params),
        hold,
        busy: Default::default(),
        memory_reads: Default::default(),
    });
    // One CPU thread: the first witness, slow, is the fill.
    let scheduler = Scheduler::new(vec![device.clone() as SharedProver], config(1, 2, 1)).unwrap();
    let slow_first = Duration::from_millis(60);
    let jobs = |n: u64| -> Vec<Job> {
        (0..n)
            .map(|i| {
                let witness = Box::new(move |shape: &Shape| {
                    if i == 0 {
                        std::thread::sleep(slow_first);
                    }
                    shape.witness(circuit(i))
                });
                Job::from_witness_fn(witness, Randomness::Seed(i))
            })
            .collect()
    };
    let mut before = Duration::ZERO;
    for n in [4u64, 2] {
        let m = scheduler.run(shape.clone(), jobs(n)).unwrap().metrics;
        assert_eq!(m.jobs_done, n as usize, "{m:?}");
        let [d] = &m.devices[..] else { panic!("one device expected: {m:?}") };
        assert_eq!(d.name, "clocked-device");
        // One worker: the holds do not overlap, so each counts in full.
        assert!(d.busy >= hold * n as u32, "{n} jobs: {:?} busy, {hold:?} each", d.busy);
        assert!(d.busy <= m.proving_busy && m.proving_busy <= m.wall, "{m:?}");
        assert!(m.fill >= slow_first && m.fill < m.wall, "{m:?}");
        // The idle ends: nothing to compute before the first witness; the ends and the busy
        // time fit in the batch.
        let edges = d.idle_edges.expect("a clocked device says its idle ends");
        assert!(edges.before_first >= m.fill, "{edges:?} {m:?}");
        assert!(edges.before_first + d.busy + edges.after_last <= m.wall, "{edges:?} {m:?}");
        let (all, after_fill) = (m.device_busy_fraction().unwrap(), m.device_busy_after_fill().unwrap());
        assert!(0.0 < all && all <= after_fill && after_fill <= 1.0, "{all} {after_fill}");
        // The batch's share, not the counter: the device's total grows by exactly it.
        let total = device.busy.total();
        assert_eq!(total - before, d.busy, "batch of {n}");
        before = total;
        // Two readings a batch, in order: the start's, then the end's.
        let memory = d.memory.expect("a device that reports its memory");
        let reads = device.memory_reads.load(std::sync::atomic::Ordering::SeqCst);
        assert_eq!((memory.start.in_use, memory.end.in_use), ((100 + reads - 2) * MIB, (100 + reads - 1) * MIB));
        assert_eq!(
            (memory.end.reserved, memory.end.total, memory.peak_in_use()),
            (64 * MIB, 1024 * MIB, memory.end.in_use)
        );
    }
    let m = Scheduler::new(vec![cpu()], config(1, 1, 1)).unwrap().run(shape, jobs(1)).unwrap().metrics;
    assert!(m.devices.is_empty() && m.device_busy_fraction().is_none(), "{m:?}");
}

#[test]
fn workers_follow_the_provers_lanes_and_bad_settings_are_refused() {
    let auto = Config { workers: Workers::Auto, ..Config::default() };
    let two = Scheduler::new(vec![cpu(), cpu()], auto).unwrap();
    assert_eq!(two.worker_provers().len(), 2, "one lane per CPU prover");
    assert_eq!(Scheduler::new(vec![cpu()], config(1, 1, 3)).unwrap().worker_provers().len(), 3);
    assert!(matches!(Scheduler::new(vec![], auto), Err(SchedError::NoProvers)));
    assert!(matches!(Scheduler::new(vec![cpu()], config(1, 1, 0)), Err(SchedError::Zero { what: "workers" })));
    assert!(matches!(Scheduler::new(vec![cpu()], config(1, 0, 1)), Err(SchedError::Zero { what: "queue_depth" })));
    // An empty batch finishes at once.
    let report = Scheduler::new(vec![cpu()], auto).unwrap().run(setup().1, Vec::new()).unwrap();
    assert!(report.outcomes.is_empty());
}

/// A prover whose device faults (a sticky CUDA error, as after an illegal address) from its
/// `fail_from`-th proof on; proves on the CPU before that.
#[cfg(feature = "cuda")]
struct FaultingDevice {
    inner: CpuProver,
    calls: std::sync::atomic::AtomicUsize,
    fail_from: usize,
}

#[cfg(feature = "cuda")]
impl Prover for FaultingDevice {
    fn name(&self) -> String {
        "faulting-device".into()
    }
    fn parameters(&self) -> &Parameters {
        self.inner.parameters()
    }
    fn sums(&self, assignments: &[Assignment], t: &mut Timings) -> Result<Vec<Sums>, Groth16Error> {
        self.inner.sums(assignments, t)
    }
    fn sums_recorded(&self, shape: &Shape, witnesses: &[Witness], t: &mut Timings) -> Result<Vec<Sums>, Groth16Error> {
        if self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) >= self.fail_from {
            let status = kiln_cuda::cudarc::driver::sys::CUresult::CUDA_ERROR_ILLEGAL_ADDRESS;
            return Err(Groth16Error::Cuda(kiln_cuda::CudaError::Driver { op: "cuStreamSynchronize", status }));
        }
        self.inner.sums_recorded(shape, witnesses, t)
    }
}

/// A device that faults mid-batch is retired and says so; the job it was proving moves to the
/// other prover, which proves every job, and later batches run on the provers left. With
/// every prover retired, a batch is refused with a typed error.
#[cfg(feature = "cuda")]
#[test]
fn a_sticky_device_error_retires_that_prover_and_the_others_go_on() {
    let (params, shape) = setup();
    let faulting = |fail_from: usize| -> SharedProver {
        Arc::new(FaultingDevice { inner: CpuProver::new(params.clone()), calls: 0.into(), fail_from })
    };
    // The healthy prover is slowed a little so that the faulting one surely takes a job.
    let slow_cpu = hooked(|_| std::thread::sleep(Duration::from_millis(30)));
    let scheduler = Scheduler::new(vec![faulting(0), slow_cpu], config(2, 2, 2)).unwrap();
    let jobs = |n: u64| (0..n).map(|i| Job::new(circuit(i), Randomness::Seed(i))).collect();
    let report = scheduler.run(shape.clone(), jobs(10)).unwrap();
    let m = report.metrics.clone();
    assert_eq!(m.retired, vec!["faulting-device".to_string()], "{m:?}");
    assert_eq!((m.jobs_done, m.jobs_failed, m.jobs_moved), (10, 0, 1), "the faulting job moved: {m:?}");
    for o in &report.outcomes {
        let proof = o.result.as_ref().unwrap_or_else(|e| panic!("job {}: {e}", o.index));
        assert!(verifies(proof, o.index as u64), "job {}", o.index);
    }
    assert_eq!(scheduler.retired(), vec!["faulting-device".to_string()]);

    // The next batch runs on the CPU prover alone (both fixed workers on it now).
    assert!(scheduler.worker_provers().iter().all(|p| p.name() == "cpu-hooked"));
    let m = scheduler.run(shape.clone(), jobs(3)).unwrap().metrics;
    assert_eq!((m.jobs_done, m.jobs_failed, m.workers), (3, 0, 2), "{m:?}");
    assert!(m.retired.is_empty(), "retired during an earlier batch, not this one: {m:?}");

    // Two faulting devices and a healthy one: a job lost on one device moves past the other
    // lost one (retiring it too) to the healthy prover; every job is proved.
    let slow_cpu = hooked(|_| std::thread::sleep(Duration::from_millis(30)));
    let scheduler = Scheduler::new(vec![faulting(1), faulting(1), slow_cpu], config(2, 2, 3)).unwrap();
    let report = scheduler.run(shape.clone(), jobs(12)).unwrap();
    let m = report.metrics.clone();
    assert_eq!((m.jobs_done, m.jobs_failed), (12, 0), "{m:?}");
    assert_eq!(m.retired, vec!["faulting-device".to_string(); 2], "{m:?}");
    assert!((1..=2).contains(&m.jobs_moved), "{m:?}");
    for o in &report.outcomes {
        assert!(verifies(o.result.as_ref().unwrap(), o.index as u64), "job {}", o.index);
    }

    // Only faulting provers: once the last is retired nothing can prove, and the job it was
    // proving fails with the device's error.
    let scheduler = Scheduler::new(vec![faulting(1)], config(1, 2, 1)).unwrap();
    let report = scheduler.run(shape.clone(), jobs(3)).unwrap();
    assert_eq!(report.metrics.jobs_done, 1, "one proof before the fault: {:?}", report.metrics);
    let failed: Vec<&JobError> = report.outcomes.iter().filter_map(|o| o.result.as_ref().err()).collect();
    assert!(
        failed.iter().any(|e| matches!(e, JobError::Prove { source, .. } if source.is_device_lost())),
        "the faulting job fails with the device's error: {failed:?}"
    );
    assert_eq!(report.metrics.jobs_moved, 0);
    let err = scheduler.run(shape, jobs(1)).unwrap_err();
    assert!(matches!(err, SchedError::AllRetired { .. }), "{err}");
}
