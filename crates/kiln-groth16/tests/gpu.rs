//! The GPU prover against the CPU prover and bellperson's verifier (needs a CUDA GPU: run
//! through `cargo xtask gpu-bundle`; skipped visibly without one).

use std::sync::Arc;

use bellperson::groth16 as bp;
use blstrs::{Bls12, Scalar};
use ff::Field;
use kiln_cuda::cudarc::driver::{result, sys};
use kiln_cuda::testing::{gpu_or_skip, small_sizes};
use kiln_groth16::circuits::{Builtin, Kind};
use kiln_groth16::prover::conformance::check_prover;
use kiln_groth16::{
    CpuProver, GpuOptions, GpuProver, NoProgress, Parameters, Proof, ProveOptions, Prover, Shape, SrsMode, Trapdoor,
    create_proofs_recorded, create_proofs_with, gpu_setup, random_setup, setup_with_trapdoor,
};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;

fn options() -> GpuOptions {
    GpuOptions { workers: 2, ..GpuOptions::default() }
}

/// Fresh (r, s) for `n` circuits; the seed is printed so a failure can be replayed.
fn randomness(n: usize) -> Vec<(Scalar, Scalar)> {
    let seed = rand::thread_rng().next_u64();
    println!("randomness seed {seed}");
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    (0..n).map(|_| (Scalar::random(&mut rng), Scalar::random(&mut rng))).collect()
}

/// bellperson's verifier on kiln's bytes.
fn bellperson_verifies(params: &Parameters, proof: &Proof, inputs: &[Scalar]) -> bool {
    let bp_params =
        bp::Parameters::<Bls12>::read(&params.to_bytes()[..], false).expect("bellperson reads kiln's params");
    let pvk = bp::prepare_verifying_key(&bp_params.vk);
    let bp_proof = bp::Proof::<Bls12>::read(&proof.to_bytes()[..]).expect("bellperson reads kiln's proof");
    bp::verify_proof(&pvk, &bp_proof, inputs).expect("bellperson verification runs")
}

/// The VRAM plan a test expects the prover to run under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// SRS resident, every sum whole.
    Resident,
    /// SRS resident, H, L and A summed in pieces.
    Pieces,
    /// SRS streamed from host memory.
    Streamed,
}

/// GPU and CPU proofs of a batch are byte-identical for the same (r, s), and verify with
/// bellperson's verifier. Returns the GPU prover (`None` without a GPU).
fn gpu_equals_cpu(kind: Kind, log: u32, batch: u64, options: &GpuOptions, expect: Expect) -> Option<GpuProver> {
    let _device = gpu_or_skip("gpu_equals_cpu")?;
    let ctx = format!("{kind} 2^{log} x{batch}");
    let seed = rand::thread_rng().next_u64();
    println!("{ctx}: witness seed {seed}");
    let circuits: Vec<Builtin> = (0..batch).map(|i| Builtin::new(kind, 1 << log, seed + i)).collect();
    let params = Arc::new(random_setup(circuits[0], &mut ChaCha20Rng::seed_from_u64(seed), &NoProgress).unwrap());
    let gpu = GpuProver::new(params.clone(), options).unwrap_or_else(|e| panic!("{ctx}: GpuProver::new: {e}"));
    let mode = if expect == Expect::Streamed { SrsMode::Streamed } else { SrsMode::Resident };
    assert_eq!(gpu.srs_mode(), mode, "{ctx}: plan:\n{}", gpu.plan());
    assert_eq!(gpu.plan().pieces, expect == Expect::Pieces, "{ctx}: plan:\n{}", gpu.plan());
    let r_s = randomness(circuits.len());
    let (ours, t) = create_proofs_with(&gpu, circuits.clone(), &r_s, ProveOptions::default())
        .unwrap_or_else(|e| panic!("{ctx}: GPU proving: {e}"));
    assert!(t.on_gpu);
    let (theirs, _) =
        create_proofs_with(&CpuProver::new(params.clone()), circuits.clone(), &r_s, ProveOptions::default())
            .unwrap_or_else(|e| panic!("{ctx}: CPU proving: {e}"));
    // The recorded path: a, b, c evaluated straight into the GPU prover's pinned buffers.
    let shape = Shape::record(circuits[0]).unwrap();
    let (recorded, _) = create_proofs_recorded(&gpu, Some(&shape), circuits.clone(), &r_s, ProveOptions::default())
        .unwrap_or_else(|e| panic!("{ctx}: GPU proving through the recorded shape: {e}"));
    for (i, c) in circuits.iter().enumerate() {
        assert_eq!(ours[i].to_bytes(), theirs[i].to_bytes(), "{ctx}: proof {i}: GPU bytes differ from the CPU's");
        assert_eq!(recorded[i].to_bytes(), theirs[i].to_bytes(), "{ctx}: proof {i}: recorded GPU bytes differ");
        assert!(bellperson_verifies(&params, &ours[i], &c.public_inputs()), "{ctx}: proof {i}: bellperson rejects it");
    }
    Some(gpu)
}

/// The GPU setup (fixed-base products and inverse FFT on the device, QAP from the recorded
/// shape) writes the CPU setup's bytes for the same trapdoor, for every built-in circuit; and
/// the GPU prover's proofs under GPU-made parameters verify with bellperson's verifier.
#[test]
#[ignore = "needs a CUDA GPU: cargo xtask gpu-bundle"]
fn gpu_setup_equals_cpu_setup() {
    let Some(device) = gpu_or_skip("gpu_setup_equals_cpu_setup") else { return };
    let seed = rand::thread_rng().next_u64();
    println!("trapdoor seed {seed}");
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let logs: &[u32] = if small_sizes() { &[8] } else { &[10, 16] };
    for &log in logs {
        for kind in Kind::ALL {
            let c = Builtin::new(kind, 1 << log, seed);
            let t = Trapdoor::random(&mut rng);
            let cpu = setup_with_trapdoor(c, &t, &NoProgress).unwrap();
            let gpu = gpu_setup(&Shape::record(c).unwrap(), &t, &device, &NoProgress)
                .unwrap_or_else(|e| panic!("{kind} 2^{log}: gpu_setup: {e}"));
            assert!(gpu.to_bytes() == cpu.to_bytes(), "{kind} 2^{log}: GPU and CPU setups differ (seed {seed})");
        }
    }
    let c = Builtin::new(Kind::Porep, 1 << 10, seed);
    let params =
        Arc::new(gpu_setup(&Shape::record(c).unwrap(), &Trapdoor::random(&mut rng), &device, &NoProgress).unwrap());
    let gpu = GpuProver::new(params.clone(), &options()).unwrap();
    let (proofs, _) = create_proofs_with(&gpu, vec![c], &randomness(1), ProveOptions::default()).unwrap();
    assert!(bellperson_verifies(&params, &proofs[0], &c.public_inputs()));
}

#[test]
#[ignore = "needs a CUDA GPU: cargo xtask gpu-bundle"]
fn gpu_prover_passes_the_conformance_suite() {
    let Some(_device) = gpu_or_skip("gpu_prover_passes_the_conformance_suite") else { return };
    check_prover(64, &|params| GpuProver::new(params, &options()));
}

#[test]
#[ignore = "needs a CUDA GPU: cargo xtask gpu-bundle"]
fn gpu_proofs_equal_cpu_proofs_at_2_10_and_2_16() {
    for kind in Kind::ALL {
        gpu_equals_cpu(kind, 10, 3, &options(), Expect::Resident);
        if !small_sizes() {
            gpu_equals_cpu(kind, 16, 2, &options(), Expect::Resident);
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU: cargo xtask gpu-bundle"]
fn gpu_proofs_equal_cpu_proofs_at_2_20() {
    if small_sizes() {
        println!("skipped under KILN_TEST_SMALL: 2^20 is for the full GPU run");
        return;
    }
    for kind in Kind::ALL {
        gpu_equals_cpu(kind, 20, 1, &options(), Expect::Resident);
    }
}

/// A budget too small for the SRS makes the plan stream it from host memory, and proofs are
/// still byte-identical (the planned fallback, not an emergency).
#[test]
#[ignore = "needs a CUDA GPU: cargo xtask gpu-bundle"]
fn streamed_srs_under_a_small_budget_gives_the_same_proofs() {
    let Some(_device) = gpu_or_skip("streamed_srs_under_a_small_budget_gives_the_same_proofs") else { return };
    let log = if small_sizes() { 10 } else { 16 };
    for kind in Kind::ALL {
        // The budget from the resident plan's own figures: room for one streamed worker and
        // a quarter of the SRS, so the SRS cannot be resident (not even beside a worker with
        // its MSMs in pieces) but a streamed worker fits.
        let c = Builtin::new(kind, 1 << log, 1);
        let params = Arc::new(random_setup(c, &mut ChaCha20Rng::seed_from_u64(5), &NoProgress).unwrap());
        let probe = GpuOptions { workers: 1, stream_chunk: 256, ..GpuOptions::default() };
        let resident = GpuProver::new(params, &probe).unwrap();
        let input = resident.plan().input.clone();
        let budget = resident.domain_bytes() + input.margin_bytes + input.streamed_worker_bytes + input.srs_bytes / 4;
        drop(resident);
        println!("{kind} 2^{log}: budget {budget} B (SRS {} B)", input.srs_bytes);
        let options = GpuOptions { vram_budget: Some(budget), ..probe };
        gpu_equals_cpu(kind, log, 2, &options, Expect::Streamed);
    }
}

/// A budget that holds the SRS beside a worker only if H, L and A are summed in pieces (an
/// 80 GB card at 2^27, in small): the plan keeps the SRS resident with pieces, and proofs are
/// byte-identical. Circuits whose B is as long as L gain nothing from pieces (B's sum is
/// whole) and are not offered them.
#[test]
#[ignore = "needs a CUDA GPU: cargo xtask gpu-bundle"]
fn pieces_under_a_budget_between_give_the_same_proofs() {
    let Some(_device) = gpu_or_skip("pieces_under_a_budget_between_give_the_same_proofs") else { return };
    let log = if small_sizes() { 10 } else { 16 };
    let mut pieced_kinds = Vec::new();
    for kind in Kind::ALL {
        let c = Builtin::new(kind, 1 << log, 1);
        let params = Arc::new(random_setup(c, &mut ChaCha20Rng::seed_from_u64(6), &NoProgress).unwrap());
        let probe = GpuOptions { workers: 1, ..GpuOptions::default() };
        let whole = GpuProver::new(params, &probe).unwrap();
        let input = whole.plan().input.clone();
        let Some(pieced) = input.pieced_worker_bytes.filter(|&p| p < input.worker_bytes) else {
            println!("{kind} 2^{log}: no smaller worker with pieces (B as long as L): skipped");
            continue;
        };
        // Room for the SRS and a worker halfway between the pieced and the whole one.
        let budget = whole.domain_bytes() + input.margin_bytes + input.srs_bytes + (pieced + input.worker_bytes) / 2;
        drop(whole);
        println!("{kind} 2^{log}: budget {budget} B (worker {} B whole, {pieced} B in pieces)", input.worker_bytes);
        gpu_equals_cpu(kind, log, 2, &GpuOptions { vram_budget: Some(budget), ..probe }, Expect::Pieces);
        pieced_kinds.push(kind);
    }
    assert!(pieced_kinds.contains(&Kind::Porep), "porep (B a quarter of L) is offered pieces: {pieced_kinds:?}");
}

/// One lane and two spare host sets: proofs that would wait for the busy lane do all their host
/// work first, in a set of their own; their proofs equal the CPU prover's (synthesized and
/// recorded paths) and bellperson's verifier accepts them.
#[test]
#[ignore = "needs a CUDA GPU: cargo xtask gpu-bundle"]
fn proofs_prepared_ahead_of_a_busy_lane_are_the_same() {
    let log = if small_sizes() { 10 } else { 16 };
    let options = GpuOptions { workers: 1, prepare_ahead: Some(2), ..GpuOptions::default() };
    let Some(gpu) = gpu_equals_cpu(Kind::Porep, log, 6, &options, Expect::Resident) else { return };
    assert_eq!((gpu.lanes(), gpu.in_flight()), (1, 3), "plan:\n{}", gpu.plan());
    // Two batches of six on three threads and one lane: every thread but the lane's prepares ahead.
    println!("{} of 12 proofs prepared ahead", gpu.prepared_ahead());
    assert!(gpu.prepared_ahead() >= 2, "{} proofs prepared ahead", gpu.prepared_ahead());
}

/// (current, high-water) bytes of the device's default memory pool: every stream-ordered
/// allocation (`cuMemAllocAsync`, what cudarc's `alloc` uses) shows in them.
fn pool_usage(device: &kiln_cuda::Device) -> (u64, u64) {
    let pool = kiln_lock::default_pool(device).unwrap();
    let mut current = 0u64;
    let mut high = 0u64;
    // SAFETY: the device's default pool; both attributes are u64 (cuuint64_t).
    unsafe {
        result::mem_pool::get_attribute(
            pool,
            sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_CURRENT,
            (&mut current as *mut u64).cast(),
        )
        .unwrap();
        result::mem_pool::get_attribute(
            pool,
            sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_HIGH,
            (&mut high as *mut u64).cast(),
        )
        .unwrap();
    }
    (current, high)
}

fn reset_pool_high_water(device: &kiln_cuda::Device) {
    let pool = kiln_lock::default_pool(device).unwrap();
    let mut zero = 0u64;
    // SAFETY: resetting the high-water mark takes a u64 zero.
    unsafe {
        result::mem_pool::set_attribute(
            pool,
            sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_HIGH,
            (&mut zero as *mut u64).cast(),
        )
        .unwrap();
    }
}

/// After start-up, a batch of proofs makes no device allocation: the pool's high-water mark
/// stays at its level before the batch, and the driver's free memory is unchanged.
#[test]
#[ignore = "needs a CUDA GPU: cargo xtask gpu-bundle"]
fn proving_path_allocates_nothing() {
    let Some(device) = gpu_or_skip("proving_path_allocates_nothing") else { return };
    let log = if small_sizes() { 10 } else { 16 };
    let circuits: Vec<Builtin> = (0..4).map(|i| Builtin::new(Kind::Porep, 1 << log, 7 + i)).collect();
    let params = Arc::new(random_setup(circuits[0], &mut ChaCha20Rng::seed_from_u64(3), &NoProgress).unwrap());
    let gpu = GpuProver::new(params.clone(), &options()).unwrap();
    let r_s = randomness(circuits.len());
    // One batch first: anything lazily created on first use (module loads, events) is not an
    // allocation of the proving path, but would blur the measurement.
    create_proofs_with(&gpu, circuits.clone(), &r_s, ProveOptions::default()).unwrap();
    device.ctx().bind_to_thread().unwrap();
    let (used_before, _) = pool_usage(&device);
    reset_pool_high_water(&device);
    let (free_before, _) = device.mem_info().unwrap();
    for _ in 0..3 {
        create_proofs_with(&gpu, circuits.clone(), &r_s, ProveOptions::default()).unwrap();
    }
    let (used_after, high_after) = pool_usage(&device);
    let (free_after, _) = device.mem_info().unwrap();
    assert_eq!(used_after, used_before, "pool memory in use changed across the batches");
    assert!(
        high_after <= used_before,
        "a stream-ordered allocation happened while proving: high water {high_after} > {used_before}"
    );
    assert_eq!(free_after, free_before, "the driver's free memory changed while proving");
}
