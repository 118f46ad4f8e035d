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
        let [device] = &m.devices[..] else { panic!("one device: {m:?}") };
        println!(
            "porep 2^{LOG} x10, {} workers: {:?} wall ({:?} measured), proving {:.1}%, device {} busy {:?} \
             ({:.1}%, {:.1}% after the {:?} fill), {:.0} proofs/min, peak queue {}",
            m.workers,
            m.wall,
            start.elapsed(),
            100.0 * m.busy_fraction(),
            device.name,
            device.busy,
            100.0 * m.device_busy_fraction().unwrap(),
            100.0 * m.device_busy_after_fill().unwrap(),
            m.fill,
            m.proofs_per_minute(),
            m.peak_queue_depth
        );
        assert!(m.timings.on_gpu);
        assert!(device.busy > std::time::Duration::ZERO && device.busy <= m.proving_busy, "{m:?}");
        let proofs = report.into_proofs().unwrap();
        for (i, (g, c)) in proofs.iter().zip(&cpu).enumerate() {
            assert_eq!(g.to_bytes(), c.to_bytes(), "{lanes} lanes: proof {i}");
        }
    }
}

/// Among ten jobs on the GPU, one unsatisfied circuit and one whose kernel launch the driver
/// refuses (the `fail_launch_on_input` test hook: a real CUDA error on the proof's stream)
/// each fail alone with a typed error; the other eight proofs equal the CPU prover's; and the
/// same prover keeps proving afterwards.
#[test]
#[ignore = "needs a CUDA GPU: cargo xtask gpu-bundle"]
fn a_fault_on_the_gpu_fails_only_its_job() {
    let Some(_device) = gpu_or_skip("a_fault_on_the_gpu_fails_only_its_job") else { return };
    let params = Arc::new(random_setup(circuit(0), &mut ChaCha20Rng::seed_from_u64(3), &NoProgress).unwrap());
    let shape = Arc::new(Shape::record(circuit(0)).unwrap());
    let (unsatisfied, refused) = (4u64, 7u64);
    let fail_on = circuit(refused).public_inputs()[0];
    assert!((0..10).filter(|&i| circuit(i).public_inputs()[0] == fail_on).eq([refused]), "hook matches one job");
    let options = GpuOptions { workers: 2, fail_launch_on_input: Some(fail_on), ..GpuOptions::default() };
    let gpu = GpuProver::new(params.clone(), &options).unwrap();
    let scheduler = Scheduler::new(vec![Arc::new(gpu)], Config::default()).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(21);
    let r_s: Vec<(Scalar, Scalar)> = (0..10).map(|_| (Scalar::random(&mut rng), Scalar::random(&mut rng))).collect();
    let jobs = |faults: bool| -> Vec<Job> {
        (0..10u64)
            .map(|i| {
                let (r, s) = r_s[i as usize];
                if faults && i == unsatisfied {
                    let witness = Box::new(move |shape: &Shape| {
                        let mut w = shape.witness(circuit(i))?;
                        w.aux[0] += Scalar::ONE;
                        Ok(w)
                    });
                    Job::from_witness_fn(witness, Randomness::Given(r, s))
                } else if !faults && i == refused {
                    Job::new(circuit(i + 100), Randomness::Given(r, s))
                } else {
                    Job::new(circuit(i), Randomness::Given(r, s))
                }
            })
            .collect()
    };
    let report = scheduler.run(shape.clone(), jobs(true)).unwrap();
    assert_eq!((report.metrics.jobs_done, report.metrics.jobs_failed), (8, 2));
    let err = report.outcomes[unsatisfied as usize].result.as_ref().unwrap_err();
    assert!(matches!(err, JobError::Prove { source: Groth16Error::ProofRejected { .. }, .. }), "{err}");
    let err = report.outcomes[refused as usize].result.as_ref().unwrap_err();
    assert!(matches!(err, JobError::Prove { source: Groth16Error::Cuda(_), .. }), "{err}");
    let cpu = CpuProver::new(params);
    for (i, outcome) in report.outcomes.iter().enumerate() {
        if let Ok(proof) = &outcome.result {
            let (want, _) =
                create_proofs_with(&cpu, vec![circuit(i as u64)], &r_s[i..=i], ProveOptions::default()).unwrap();
            assert_eq!(proof.to_bytes(), want[0].to_bytes(), "job {i}");
        }
    }
    // The same prover (and its lanes) keeps proving: a clean batch completes in full.
    assert_eq!(scheduler.run(shape, jobs(false)).unwrap().metrics.jobs_done, 10);
}
