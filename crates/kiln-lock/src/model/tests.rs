use proptest::prelude::*;

use super::*;
use crate::policy::{Serial, SplitMemoryCompute};

/// §1 on a 24 GiB and a 16 GiB card: the split design runs out of memory (its trim cannot
/// release frees queued behind another worker's kernels), kiln's lanes never do and keep
/// the GPU at least as busy as the serial design.
#[test]
fn section1_split_design_runs_out_of_memory_and_lanes_do_not() {
    for card in [16, 24] {
        let scenario = Scenario::section1(card);
        let split = run(&scenario, SplitMemoryCompute::new()).unwrap();
        let serial = run(&scenario, Serial::new()).unwrap();
        let lanes = run(&scenario, scenario.kiln_lanes().unwrap()).unwrap();
        println!("{card} GiB card\n{split}{serial}{lanes}");

        assert!(split.ooms > 0, "{card} GiB: the split design must reproduce §1's OOM:\n{split}");
        assert!(split.fallbacks > 0, "{card} GiB: the split design must see too little free memory:\n{split}");
        assert!(split.global_overlaps > 0, "{card} GiB: its trims overlap other workers' work:\n{split}");
        assert!(split.stall > 0, "{card} GiB: OOM retries stall the split design:\n{split}");

        assert_eq!(lanes.ooms, 0, "{card} GiB: kiln's lanes ran out of memory:\n{lanes}");
        assert_eq!(lanes.global_overlaps, 0, "{card} GiB: a device-global call overlapped a lane:\n{lanes}");
        assert_eq!(lanes.partitions, 30);
        assert!(lanes.peak_bytes <= scenario.capacity);
        assert!(
            lanes.gpu_busy >= serial.gpu_busy,
            "{card} GiB: lanes busy {:.4} < serial busy {:.4}\n{serial}{lanes}",
            lanes.gpu_busy,
            serial.gpu_busy
        );
        assert!(lanes.makespan <= serial.makespan, "{card} GiB: lanes slower than serial\n{serial}{lanes}");

        // Serial is correct too (it synchronizes before trimming), only slower.
        assert_eq!(serial.ooms, 0, "{serial}");
        assert_eq!(serial.global_overlaps, 0, "{serial}");
    }
}

#[test]
fn section1_split_design_stalls_on_the_second_worker_of_a_16_gib_card() {
    // One 12 GiB working set in flight leaves 4 GiB: the second worker's trim cannot help.
    let split = run(&Scenario::section1(16), SplitMemoryCompute::new()).unwrap();
    assert!(split.notes.iter().any(|n| n.contains("worker 1") && n.contains("out of memory")), "{split}");
}

#[test]
fn lanes_share_fewer_lanes_than_workers() {
    let scenario = Scenario::section1(24);
    let lanes = scenario.kiln_lanes().unwrap();
    assert_eq!(lanes.lanes(), Some(2), "24 GiB holds two 12 GiB arenas");
    let r = run(&scenario, lanes).unwrap();
    assert_eq!(r.peak_bytes, 24 * GIB);
}

#[test]
fn nothing_fits_is_a_planned_refusal() {
    let s = Scenario::uniform(8 * GIB, 12 * GIB, 2, 1, Partition::SECTION1);
    assert!(matches!(s.kiln_lanes(), Err(SimError::NothingFits { .. })));
}

#[test]
fn misuse_is_caught_by_the_runtime_check() {
    // A lane policy whose memory strategy pretends to trim in the memory phase: the model
    // issues the trim from inside a lane and the policy's check must refuse it.
    #[derive(Debug)]
    struct TrimmingLanes(Lanes);
    impl LockPolicy for TrimmingLanes {
        fn name(&self) -> &'static str {
            "lanes with a trim in the memory phase"
        }
        fn memory_strategy(&self) -> MemoryStrategy {
            MemoryStrategy::TrimAllocPerPartition
        }
        fn try_enter(&mut self, w: WorkerId, s: Section) -> Result<bool, LockError> {
            self.0.try_enter(w, s)
        }
        fn leave(&mut self, w: WorkerId, s: Section) -> Result<(), LockError> {
            self.0.leave(w, s)
        }
        fn check_device_global(&self, w: WorkerId, op: &'static str) -> Result<(), LockError> {
            self.0.check_device_global(w, op)
        }
    }
    let s = Scenario::section1(24);
    let err = run(&s, TrimmingLanes(Lanes::new(2).unwrap())).unwrap_err();
    assert!(
        matches!(err, SimError::Lock(LockError::DeviceGlobalOutsideExclusive { op: "cuMemPoolTrimTo", .. })),
        "{err}"
    );
}

fn arb_partition() -> impl Strategy<Value = Partition> {
    (0..3_000u64, 0..50u64, 0..3_000u64, 0..100u64).prop_map(|(prep, memory, compute, epilogue)| Partition {
        prep: prep * MS,
        ahead: 0,
        memory: memory * MS,
        compute: compute * MS,
        epilogue: epilogue * MS,
    })
}

fn arb_scenario() -> impl Strategy<Value = Scenario> {
    let stage = prop::option::of((1usize..=4, 1usize..=3))
        .prop_map(|s| s.map(|(cpu_threads, queue_depth)| WitnessStage { cpu_threads, queue_depth }));
    let sharing = prop::option::of(250u32..=1000)
        .prop_map(|s| s.map_or(ComputeSharing::Serial, |solo_permille| ComputeSharing::Shared { solo_permille }));
    let host = prop::option::of((1u32..=16, 1u32..=16, 1u32..=16))
        .prop_map(|h| h.map(|(cores, witness_cores, lane_cores)| HostModel { cores, witness_cores, lane_cores }));
    (1usize..=4, 1u64..=64, 1u64..=48, prop::option::of(1usize..4), 0u64..4, stage, sharing, host).prop_flat_map(
        |(workers, card_gib, need_gib, replan, threshold_gib, witness_stage, compute_sharing, host)| {
            prop::collection::vec(prop::collection::vec(arb_partition(), 1..5), workers).prop_map(move |work| {
                Scenario {
                    capacity: card_gib * GIB,
                    bytes_per_worker: need_gib * GIB,
                    work,
                    release_threshold: threshold_gib * GIB,
                    retry_after: 100 * MS,
                    replan_every: replan,
                    witness_stage,
                    compute_sharing,
                    host,
                }
            })
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// kiln's policy over random workloads: never out of memory, never deadlocked (run
    /// returns), never a device-global call beside a lane's work; every partition done.
    #[test]
    fn lanes_never_oom_deadlock_or_overlap(s in arb_scenario()) {
        match s.kiln_lanes() {
            Err(SimError::NothingFits { .. }) => prop_assert!(s.capacity < s.bytes_per_worker),
            Err(e) => prop_assert!(false, "unexpected plan error {e}"),
            Ok(lanes) => {
                let r = run(&s, lanes).map_err(|e| TestCaseError::fail(format!("{e}")))?;
                prop_assert_eq!(r.ooms, 0, "{}", r);
                prop_assert_eq!(r.global_overlaps, 0, "{}", r);
                prop_assert_eq!(r.fallbacks, 0, "{}", r);
                prop_assert_eq!(r.partitions, s.work.iter().map(Vec::len).sum::<usize>());
                prop_assert!(r.peak_bytes <= s.capacity);
                prop_assert!(r.gpu_busy <= 1.0 + 1e-9);
            }
        }
    }

    /// Serial and split never deadlock either (they fail by OOM, not by hanging), and the
    /// model's accounting stays within the device.
    #[test]
    fn other_policies_terminate(s in arb_scenario()) {
        prop_assume!(s.capacity >= s.bytes_per_worker);
        for r in [run(&s, Serial::new()), run(&s, SplitMemoryCompute::new())] {
            let r = r.map_err(|e| TestCaseError::fail(format!("{e}")))?;
            prop_assert!(r.peak_bytes <= s.capacity);
            prop_assert_eq!(r.partitions, s.work.iter().map(Vec::len).sum::<usize>());
        }
    }
}

/// The partition of porep 2^24 on the H200 as one worker measured it (docs/PERF.md, the
/// orchestrator's batches of ten, 1 worker, 2026-12-04; summed phases / 20 over two rounds):
/// synthesis 378 ms (the witness, made directly on several threads), the G1 phases on the GPU
/// 383 ms (H step 48.9 + H and L sums 226.6 + A and B_G1 sums 107.5; B_G2 runs beside them on
/// its own stream), and the rest of the worker's busy time per proof (592 ms: 93.4% of
/// 6335 ms / 10) on the CPU: 209 ms, of which prepare (a, b, c into pinned buffers) is 96.
/// Prepare is counted with the epilogue, not as the memory phase: the model's memory phase
/// also queues a copy of its length, which kiln's prover overlaps with the H step instead
/// (`h_step_from_host`); in a steady stream of proofs a worker's CPU time before and after
/// its GPU work are alike.
const POREP_2_24: Partition = Partition { prep: 378 * MS, ahead: 0, memory: 0, compute: 383 * MS, epilogue: 209 * MS };

fn orchestrated(workers: usize, cpu_threads: usize) -> Scenario {
    let stage = WitnessStage { cpu_threads, queue_depth: 2 };
    Scenario::orchestrated(138 * GIB, 6 * GIB, workers, 10, POREP_2_24, stage)
}

fn proofs_per_minute(r: &Report) -> f64 {
    r.partitions as f64 * 60e6 / r.makespan as f64
}

/// The witness stage runs ahead of the workers: with enough CPU threads a worker waits for a
/// witness only at the start, so the batch takes the first witness plus the proving; with one
/// thread it is bound by synthesis; and more workers help until the GPU binds.
#[test]
fn witness_stage_hides_synthesis_until_the_gpu_binds() {
    let p = POREP_2_24;
    let one = run(&orchestrated(1, 10), orchestrated(1, 10).kiln_lanes().unwrap()).unwrap();
    assert_eq!(one.partitions, 10);
    assert_eq!(one.makespan, p.prep + 10 * (p.memory + p.compute + p.epilogue), "{one}");
    let own_prep = Scenario::uniform(138 * GIB, 6 * GIB, 1, 10, p);
    let unstaged = run(&own_prep, own_prep.kiln_lanes().unwrap()).unwrap();
    assert!(unstaged.makespan > one.makespan + 8 * p.prep, "the stage hides synthesis:\n{unstaged}{one}");

    let starved = run(&orchestrated(4, 1), orchestrated(4, 1).kiln_lanes().unwrap()).unwrap();
    assert!(starved.makespan >= 10 * p.prep, "one thread makes ten witnesses in turn:\n{starved}");

    let mut last = u64::MAX;
    for workers in 1..=4 {
        let s = orchestrated(workers, 10);
        let r = run(&s, s.kiln_lanes().unwrap()).unwrap();
        assert_eq!((r.partitions, r.ooms, r.global_overlaps), (10, 0, 0), "{r}");
        assert!(r.makespan <= last, "{workers} workers slower than {}:\n{r}", workers - 1);
        // The GPU bound: ten proofs' compute back to back, after the first witness.
        assert!(r.makespan >= p.prep + 10 * p.compute, "{r}");
        last = r.makespan;
    }
}

/// One measured build of the orchestrator (porep 2^24, ten partitions, 10 witness threads,
/// one H200; docs/PERF.md): its one-worker phases and the proofs per minute measured at 1 to 4
/// workers (the mean of the rounds measured).
struct Measured {
    build: &'static str,
    phases: Partition,
    /// Threads of the run's witness stage.
    witness_threads: usize,
    /// The host's cores as the model shares them, where the lanes' CPU time is computing.
    host: Option<HostModel>,
    proofs_per_minute: [f64; 4],
}

/// A 16-core host whose witness thread runs porep's parallel generator (every core) and whose
/// lanes' a, b, c evaluation and staging keep 8 cores' worth busy: fitted to the ninth
/// session's slower host (the one parameter, `lane_cores`; 12 also fits within 15%, 16 does
/// not), and within 15% of the seventh's. The earlier builds' lane time was mostly waits on
/// pageable copies, not computing, and they keep the model without a shared host (with this
/// one the fourth session's four workers would come out 18% low).
const PARALLEL_WITNESS_HOST: HostModel = HostModel { cores: 16, witness_cores: 16, lane_cores: 8 };

const MEASURED: [Measured; 4] = [
    // Third session: each sum's scalars uploaded from pageable memory.
    Measured {
        build: "scalars from pageable memory (third session)",
        phases: POREP_2_24,
        witness_threads: 10,
        host: None,
        proofs_per_minute: [94.8, 130.4, 144.8, 148.4],
    },
    // Fourth session: scalars staged in page-locked memory. Four workers: the mean of the four
    // rounds of two device calls (237.1, 231.5, 206.9, 197.0).
    Measured {
        build: "scalars staged page-locked (fourth session)",
        phases: Partition { prep: 381 * MS, ahead: 0, memory: 0, compute: 230 * MS, epilogue: 224 * MS },
        witness_threads: 10,
        host: None,
        proofs_per_minute: [121.8, 160.8, 184.0, 218.1],
    },
    // Seventh session (an H100): the sums over the witness first, a, b, c on the host beside
    // them; one witness thread (porep's parallel generator). One worker: synthesis 72 ms a
    // proof, G1 GPU phases 222 ms (H step 44, H + L 158, A + B_G1 20), the rest of a proof's
    // 344 ms on the lane (waiting for a, b, c, staging, epilogue) 122 ms. Means of five rounds
    // each (two calls): 2 workers 254.1 (one round 206.4), 3 272.2, 4 285.7.
    Measured {
        build: "witness sums first, one witness thread (seventh session, H100)",
        phases: Partition { prep: 72 * MS, ahead: 0, memory: 0, compute: 222 * MS, epilogue: 122 * MS },
        witness_threads: 1,
        host: Some(PARALLEL_WITNESS_HOST),
        proofs_per_minute: [174.4, 254.1, 272.2, 285.7],
    },
    // Ninth session (an H100 with a slower host: the same GPU phases, 1.4-2x the host's), the
    // seventh's build. One worker: synthesis 104 ms a proof, G1 GPU phases 224 ms (H step 44,
    // H + L 159, A + B_G1 20), the rest of its 458 ms on the lane 234 ms. Means of three
    // rounds each, one call.
    Measured {
        build: "witness sums first, slower host (ninth session, H100)",
        phases: Partition { prep: 104 * MS, ahead: 0, memory: 0, compute: 224 * MS, epilogue: 234 * MS },
        witness_threads: 1,
        host: Some(PARALLEL_WITNESS_HOST),
        proofs_per_minute: [131.1, 218.6, 221.5, 225.3],
    },
];

/// How the lanes' kernels share the H200 in the model: at once, one lane's compute phase alone
/// occupying 80% of the GPU. The one parameter fitted to the runs above (both builds, 2 to 4
/// workers); a lane's G1 phases stretching from 230 to 417 ms at two workers (fourth session)
/// says about 90%, which predicts within 15% too except four workers of the third session.
pub(super) const H200_SHARING: ComputeSharing = ComputeSharing::Shared { solo_permille: 800 };

/// The model's prediction against the orchestrator as measured (H200; the seventh and ninth
/// sessions an H100): within 15% for 1 to 4 workers, for each measured build. The inputs are
/// the one-worker run's phases, [`H200_SHARING`] and the build's host, so 2 to 4 workers are
/// predictions of the schedule (lanes held through their compute phase, witnesses from the
/// shared stage, kernels sharing the SMs, CPU work sharing the host's cores).
#[test]
fn model_predicts_the_measured_orchestrator_within_15_percent() {
    for m in &MEASURED {
        for (workers, want) in (1..=4).zip(m.proofs_per_minute) {
            let stage = WitnessStage { cpu_threads: m.witness_threads, queue_depth: 2 };
            let mut s = Scenario::orchestrated(138 * GIB, 6 * GIB, workers, 10, m.phases, stage);
            s.compute_sharing = H200_SHARING;
            s.host = m.host;
            let r = run(&s, s.kiln_lanes().unwrap()).unwrap();
            let got = proofs_per_minute(&r);
            println!(
                "{}: {workers} workers: predicted {got:.1} proofs/min, measured {want:.1} ({:+.1}%)",
                m.build,
                100.0 * (got / want - 1.0)
            );
            assert!(
                (got / want - 1.0).abs() <= 0.15,
                "{}: {workers} workers: predicted {got:.1}, measured {want:.1}\n{r}",
                m.build
            );
        }
    }
}

/// The same phases with the kernels taking turns (one compute engine, the model before): the
/// page-locked build's 2 workers come out 28% above the measured figure, because taking turns
/// staggers the lanes so that one's CPU work hides behind the other's kernels, which the real
/// GPU (the lanes' kernels at once, stretched) does not do.
#[test]
fn kernels_taking_turns_overestimate_two_lanes() {
    let m = &MEASURED[1];
    let stage = WitnessStage { cpu_threads: 10, queue_depth: 2 };
    let s = Scenario::orchestrated(138 * GIB, 6 * GIB, 2, 10, m.phases, stage);
    let got = proofs_per_minute(&run(&s, s.kiln_lanes().unwrap()).unwrap());
    assert!(got > 1.2 * m.proofs_per_minute[1], "taking turns: {got:.1} proofs/min");
}

/// Sharing the GPU changes when kernels end, not how much work the GPU does: two lanes' kernels
/// started together both end at twice one's length, and the engine is busy that long.
#[test]
fn shared_kernels_split_the_engine() {
    let mut d = DeviceModel::new(GIB, 3, 0).with_sharing(ComputeSharing::Shared { solo_permille: 1000 });
    let a = d.enqueue(0, Engine::Compute, 100, 0);
    let b = d.enqueue(1, Engine::Compute, 100, 1);
    d.advance_to(150);
    assert!(!d.is_done(a) && !d.is_done(b), "each ran at half rate");
    d.advance_to(200);
    assert!(d.is_done(a) && d.is_done(b));
    assert_eq!(d.compute_busy(), 200);
    // A kernel joining halfway: the first has 50 of 100 left, then runs at half rate (100 more);
    // the second does 50 in that time, then 50 alone.
    let c = d.enqueue(0, Engine::Compute, 100, 0);
    d.advance_to(250);
    let e = d.enqueue(1, Engine::Compute, 100, 1);
    d.advance_to(349);
    assert!(!d.is_done(c));
    d.advance_to(350);
    assert!(d.is_done(c) && !d.is_done(e));
    d.run_until_idle();
    assert_eq!(d.now(), 400);
    assert_eq!(d.compute_busy(), 400);

    // Kernels that alone fill half the GPU run side by side at full speed; a third slows all.
    let mut d = DeviceModel::new(GIB, 3, 0).with_sharing(ComputeSharing::Shared { solo_permille: 500 });
    let ops: Vec<OpId> = (0..2).map(|s| d.enqueue(s, Engine::Compute, 100, s)).collect();
    d.advance_to(100);
    assert!(ops.iter().all(|&op| d.is_done(op)), "two half-GPU kernels at once");
    let ops: Vec<OpId> = (0..3).map(|s| d.enqueue(s, Engine::Compute, 100, s)).collect();
    d.advance_to(249);
    assert!(!d.is_done(ops[0]));
    d.advance_to(250);
    assert!(ops.iter().all(|&op| d.is_done(op)), "three want 1.5 GPUs: each at 2/3 speed");
}

/// kiln-sched's machine of `devices` GPUs: `jobs` partitions spread over the devices, two
/// lanes each, one witness stage of `cpu_threads` threads feeding them all.
fn machine(devices: usize, jobs: usize, cpu_threads: usize) -> Vec<Scenario> {
    let stage = WitnessStage { cpu_threads, queue_depth: 2 };
    (0..devices)
        .map(|d| {
            let share = jobs / devices + usize::from(d < jobs % devices);
            let mut s = Scenario::orchestrated(138 * GIB, 6 * GIB, 2, share, POREP_2_24, stage);
            s.compute_sharing = H200_SHARING;
            s
        })
        .collect()
}

fn run_machine(scenarios: &[Scenario]) -> (f64, Vec<Report>) {
    let policies = scenarios.iter().map(|s| s.kiln_lanes().unwrap()).collect();
    let reports = run_devices(scenarios, policies).unwrap();
    for r in &reports {
        assert_eq!((r.ooms, r.global_overlaps), (0, 0), "{r}");
    }
    let done: usize = reports.iter().map(|r| r.partitions).sum();
    assert_eq!(done, scenarios.iter().map(|s| s.work.iter().map(Vec::len).sum::<usize>()).sum::<usize>());
    let makespan = reports.iter().map(|r| r.makespan).max().unwrap();
    (done as f64 * 60e6 / makespan as f64, reports)
}

/// Several GPUs in the model, fed by one witness stage: with the CPU stage wide enough the
/// machine scales with its GPUs (≥ 0.9 × N, issue 22's bar), every device as busy as one alone; with a narrow
/// stage (three witness threads) eight GPUs outrun it and the throughput stops at what the
/// threads make (about 476 witnesses a minute at 378 ms each; the H200 host's ten threads
/// make ~1590, above eight GPUs' ~1150 in this model).
#[test]
fn several_devices_scale_until_the_witness_stage_binds() {
    let (one, one_reports) = run_machine(&machine(1, 80, 64));
    let one_busy = one_reports[0].gpu_busy;
    for n in [2, 4] {
        let (many, reports) = run_machine(&machine(n, 80 * n, 64));
        println!("{n} devices: {many:.1} proofs/min against {one:.1} on one");
        assert!(many >= 0.9 * n as f64 * one, "{n} devices: {many:.1} proofs/min, one device {one:.1}");
        for r in &reports {
            assert!(r.gpu_busy >= 0.9 * one_busy, "every device as busy as one alone ({one_busy:.3}): {r}");
        }
    }
    let threads = 3;
    let cpu_bound = threads as f64 * 60e6 / POREP_2_24.prep as f64;
    let (eight, _) = run_machine(&machine(8, 640, threads));
    println!("8 devices, {threads} witness threads: {eight:.1} proofs/min (the CPU stage makes {cpu_bound:.1})");
    assert!(eight <= cpu_bound * 1.01, "the witness stage binds: {eight:.1} > {cpu_bound:.1}");
    assert!(eight < 0.9 * 8.0 * one, "eight GPUs are starved by {threads} threads");
}

/// Without the shared host the ninth session's three workers come out 19% high: the lanes'
/// CPU work, each on cores of its own, never waits for the others' (what the shared host adds).
#[test]
fn a_host_of_its_own_per_lane_overestimates_a_slow_host() {
    let m = &MEASURED[3];
    let stage = WitnessStage { cpu_threads: m.witness_threads, queue_depth: 2 };
    let mut s = Scenario::orchestrated(138 * GIB, 6 * GIB, 3, 10, m.phases, stage);
    s.compute_sharing = H200_SHARING;
    let got = proofs_per_minute(&run(&s, s.kiln_lanes().unwrap()).unwrap());
    assert!(got > 1.15 * m.proofs_per_minute[2], "without the shared host: {got:.1} proofs/min");
}

/// Ten partitions `p` through the orchestrator (one witness thread, queue of two) with
/// `workers` proving workers, on a card with `room_gib` beside the SRS and arenas of
/// `worker_gib`, the host of the 2^24 runs: (the lanes granted, the makespan in seconds).
fn ten_2_27_partitions(room_gib: u64, worker_gib: u64, workers: usize, p: Partition) -> (Option<usize>, f64) {
    let stage = WitnessStage { cpu_threads: 1, queue_depth: 2 };
    let mut s = Scenario::orchestrated(room_gib * GIB, worker_gib * GIB, workers, 10, p, stage);
    s.compute_sharing = H200_SHARING;
    s.host = Some(PARALLEL_WITNESS_HOST);
    let r = run(&s, s.kiln_lanes().unwrap()).unwrap();
    println!("{r}");
    (r.lanes, r.makespan as f64 / 1e6)
}

/// A 2^27 porep partition as measured on an H100 (ninth session; one lane: the SRS and one
/// worker fill the card): synthesis 0.97 s, G1 GPU phases 1.62 s, the rest of its 3.32 s on
/// the lane 1.70 s; ten partitions took 33.2 s (18.1 proofs/min). The model, with the host of
/// the 2^24 runs, plays that within 15%, and says what a card with room for two lanes (the
/// H200: 94 GiB beside the SRS, 36 GiB a whole worker) would make of the same host and phases.
#[test]
fn a_2_27_batch_on_one_lane_as_measured_and_on_two() {
    const PARTITION_2_27: Partition =
        Partition { prep: 970 * MS, ahead: 0, memory: 0, compute: 1_620 * MS, epilogue: 1_700 * MS };
    // As `kiln bench`: as many workers as the plan grants lanes.
    // H100: 30.5 GiB beside the SRS, a 28 GiB worker (sums in pieces): one lane.
    let (lanes, one) = ten_2_27_partitions(30, 28, 1, PARTITION_2_27);
    assert_eq!(lanes, Some(1));
    assert!((one / 33.2 - 1.0).abs() <= 0.15, "one lane: {one:.1} s against 33.2 s measured");
    let (lanes, two) = ten_2_27_partitions(94, 36, 2, PARTITION_2_27);
    assert_eq!(lanes, Some(2));
    println!("ten 2^27 partitions: one lane {one:.1} s (measured 33.2 s), two lanes {two:.1} s");
    assert!(two < one, "a second lane hides one lane's host time");
}

/// The tenth session's 2^27 batches on one H100 lane, one build, two runs on one machine:
/// without a spare host set (one worker: synthesis 1.15 s a partition, G1 GPU phases 1.61 s,
/// the rest of its 2.72 s on the lane 1.11 s; ten in 27.2 s, mean of three rounds) and with one
/// (two workers for the one lane: each proof stages its scalars and evaluates a, b, c before
/// it waits for the lane; G1 GPU phases 1.56 s, 0.05 s after them; ten in 18.3 s). Without,
/// the model plays the run within 15%. With, the host is nearly saturated (synthesis and the
/// next proof's host work side by side on all cores), and the phases measured in the batch
/// (synthesis 1.32 s, host work 1.20 s) already carry that sharing, which the model charges
/// again: fed those it must come out above the run; fed the same work measured alone (one
/// partition, ninth session: synthesis 0.79 s, host work 0.90 s) below it.
#[test]
fn a_2_27_batch_prepared_ahead_of_one_lane_as_measured() {
    let on_the_lane = Partition { prep: 1_150 * MS, ahead: 0, memory: 0, compute: 1_610 * MS, epilogue: 1_110 * MS };
    let in_batch = Partition { prep: 1_320 * MS, ahead: 1_200 * MS, memory: 0, compute: 1_560 * MS, epilogue: 50 * MS };
    let alone = Partition { prep: 790 * MS, ahead: 900 * MS, ..in_batch };
    // H100: one 28 GiB worker beside the SRS.
    let (lanes, without) = ten_2_27_partitions(30, 28, 1, on_the_lane);
    assert_eq!(lanes, Some(1));
    let (lanes, high) = ten_2_27_partitions(30, 28, 2, in_batch);
    assert_eq!(lanes, Some(1), "two workers, one lane: the second prepares ahead");
    let (_, low) = ten_2_27_partitions(30, 28, 2, alone);
    println!(
        "ten 2^27 partitions on one lane: {without:.1} s without a spare set (27.2 measured); \
         with one, {low:.1}..{high:.1} s (18.3 measured)"
    );
    assert!((without / 27.2 - 1.0).abs() <= 0.15, "without: {without:.1} s against 27.2 s measured");
    assert!(low <= 18.3 && 18.3 <= high, "with a spare set: {low:.1}..{high:.1} s does not hold 18.3 s measured");
    // Two lanes (an H200's room) and a spare set: three workers.
    let (lanes, two) = ten_2_27_partitions(94, 36, 3, in_batch);
    assert_eq!(lanes, Some(2));
    println!("two lanes and a spare set, phases as in the batch: {two:.1} s");
}
