//! The scheduler on the GPU prover (needs a CUDA GPU: run through `cargo xtask gpu-bundle`;
//! skipped visibly without one): the same batches as `tests/cpu.rs`, one worker per lane.

use std::sync::Arc;
use std::time::Instant;

use ff::Field;
use kiln_cuda::testing::gpu_or_skip;
use kiln_groth16::circuits::{Builtin, Kind};
use kiln_groth16::{
    CpuProver, GpuOptions, GpuProver, Groth16Error, NoProgress, ProveOptions, Prover, Scalar, Shape,
    create_proofs_with, random_setup,
};
use kiln_sched::{Config, Job, JobError, Randomness, Scheduler, SharedProver, Workers};
use rand_chacha::ChaCha20Rng;
use rand_chacha::rand_core::SeedableRng;

const LOG: u32 = 16;

fn circuit(seed: u64) -> Builtin {
    Builtin::new(Kind::Porep, 1 << LOG, seed)
}

/// Ten equally shaped porep partitions through 1, 2 and 4 lanes: every proof equals the CPU
/// prover's for the same (r, s), and the lanes prove side by side (busy fraction printed).
#[test]
#[ignore = "needs a CUDA GPU: cargo xtask gpu-bundle"]
fn ten_partitions_on_the_gpu_equal_cpu_proofs() {
    let Some(_device) = gpu_or_skip("ten_partitions_on_the_gpu_equal_cpu_proofs") else { return };
    let params = Arc::new(random_setup(circuit(0), &mut ChaCha20Rng::seed_from_u64(3), &NoProgress).unwrap());
    let shape = Arc::new(Shape::record(circuit(0)).unwrap());
    let mut rng = ChaCha20Rng::seed_from_u64(11);
    let r_s: Vec<(Scalar, Scalar)> = (0..10).map(|_| (Scalar::random(&mut rng), Scalar::random(&mut rng))).collect();
    let circuits: Vec<Builtin> = (0..10).map(circuit).collect();
    let (cpu, _) =
        create_proofs_with(&CpuProver::new(params.clone()), circuits.clone(), &r_s, ProveOptions::default()).unwrap();
    for lanes in [1, 2, 4] {
        let gpu = GpuProver::new(params.clone(), &GpuOptions { workers: lanes, ..GpuOptions::default() }).unwrap();
        println!("lanes asked {lanes}, plan:\n{}", gpu.plan());
        assert_eq!(gpu.lanes(), gpu.plan().workers);
        let prover: SharedProver = Arc::new(gpu);
        let scheduler = Scheduler::new(vec![prover], Config { workers: Workers::Auto, ..Config::default() }).unwrap();
        let jobs = circuits.iter().zip(&r_s).map(|(&c, &(r, s))| Job::new(c, Randomness::Given(r, s))).collect();
        let start = Instant::now();
        let report = scheduler.run(shape.clone(), jobs).unwrap();
        let m = report.metrics.clone();
        println!(
            "porep 2^{LOG} x10, {} workers: {:?} wall ({:?} measured), busy {:.1}%, {:.0} proofs/min, peak queue {}",
            m.workers,
            m.wall,
            start.elapsed(),
            100.0 * m.busy_fraction(),
            m.proofs_per_minute(),
            m.peak_queue_depth
        );
        assert!(m.timings.on_gpu);
        let proofs = report.into_proofs().unwrap();
        for (i, (g, c)) in proofs.iter().zip(&cpu).enumerate() {
            assert_eq!(g.to_bytes(), c.to_bytes(), "{lanes} lanes: proof {i}");
        }
    }
}

/// An unsatisfied circuit among ten on the GPU fails alone, and the prover keeps proving.
#[test]
#[ignore = "needs a CUDA GPU: cargo xtask gpu-bundle"]
fn a_fault_on_the_gpu_fails_only_its_job() {
    let Some(_device) = gpu_or_skip("a_fault_on_the_gpu_fails_only_its_job") else { return };
    let params = Arc::new(random_setup(circuit(0), &mut ChaCha20Rng::seed_from_u64(3), &NoProgress).unwrap());
    let shape = Arc::new(Shape::record(circuit(0)).unwrap());
    let gpu = GpuProver::new(params, &GpuOptions { workers: 2, ..GpuOptions::default() }).unwrap();
    let scheduler = Scheduler::new(vec![Arc::new(gpu)], Config::default()).unwrap();
    let jobs = |bad: bool| -> Vec<Job> {
        (0..10u64)
            .map(|i| {
                if bad && i == 4 {
                    let witness = Box::new(move |shape: &Shape| {
                        let mut w = shape.witness(circuit(i))?;
                        w.aux[0] += Scalar::ONE;
                        Ok(w)
                    });
                    Job::from_witness_fn(witness, Randomness::Seed(i))
                } else {
                    Job::new(circuit(i), Randomness::Seed(i))
                }
            })
            .collect()
    };
    let report = scheduler.run(shape.clone(), jobs(true)).unwrap();
    assert_eq!((report.metrics.jobs_done, report.metrics.jobs_failed), (9, 1));
    assert!(matches!(
        report.outcomes[4].result,
        Err(JobError::Prove { source: Groth16Error::ProofRejected { .. }, .. })
    ));
    assert_eq!(scheduler.run(shape, jobs(false)).unwrap().metrics.jobs_done, 10);
}
