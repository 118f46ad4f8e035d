//! GPU tests: real arenas and plans on the device (ARCHITECTURE.md §3's 2^27 budget).

use kiln_cuda::testing;
use kiln_lock::{Lanes, SharedPolicy};
use rand::Rng;

use crate::{Plan, PlanInput, SrsPlacement, Vram, VramError, measure_free};

const GIB: u64 = 1 << 30;

/// The tests of this binary measure free device memory: they must not run side by side.
static GPU: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    GPU.lock().unwrap_or_else(|p| p.into_inner())
}
const MIB: u64 = 1 << 20;

/// Sizes of one 2^27 partition: a/b/c are 3 × 2^27 × 32 B = 3 × 4 GiB, MSM scratch 4 GiB;
/// the SRS 45 GiB. Divided by 16 under the sanitizer (KILN_TEST_SMALL=1).
fn sizes() -> (u64, u64, u64) {
    let div = if testing::small_sizes() { 16 } else { 1 };
    let abc = 3 * (1u64 << 27) * 32;
    (45 * GIB / div, (abc + 4 * GIB) / div, 2 * GIB / div)
}

fn input(device: &kiln_cuda::Device, free: u64, wanted: usize) -> PlanInput {
    let (srs, worker, margin) = sizes();
    PlanInput {
        device: format!("{} ({})", device.info().map(|i| i.name).unwrap_or_default(), device.ordinal()),
        free_bytes: free,
        margin_bytes: margin,
        srs_bytes: srs,
        worker_bytes: worker,
        pieced_worker_bytes: None,
        streamed_worker_bytes: worker + worker / 8,
        workers_wanted: wanted,
    }
}

/// For 1–4 workers, then 8: plan from measured free memory, allocate once, and check that
/// the free memory dropped by exactly what the plan says (within the margin), that 8 asked
/// gives a smaller plan that still allocates without an out-of-memory, and that everything
/// comes back on release.
#[test]
#[ignore = "needs a CUDA GPU: cargo xtask gpu-bundle"]
fn plans_for_one_to_eight_workers_allocate_once_and_account_exactly() {
    let Some(device) = testing::gpu_or_skip("plans_for_one_to_eight_workers_allocate_once_and_account_exactly") else {
        return;
    };
    let _serial = serial();
    let policy = SharedPolicy::new(Lanes::new(1).unwrap());
    let excl = policy.exclusive(0).unwrap();
    let (_, worker, margin) = sizes();
    // Pool granularity and driver bookkeeping per allocation.
    let slack = 64 * MIB;
    for wanted in [1usize, 2, 3, 4, 8] {
        let free = measure_free(&excl, &device).unwrap();
        // Small sizes (sanitizer): pretend the card holds the SRS and 5.5 workers, so that 8
        // asked still does not fit.
        let (srs, _, _) = sizes();
        let budget = if testing::small_sizes() { free.min(srs + worker * 11 / 2 + margin) } else { free };
        let plan = Plan::new(input(&device, budget, wanted)).unwrap();
        println!("{plan}");
        if wanted <= 4 {
            assert_eq!(plan.srs, SrsPlacement::Resident, "an H200 holds the SRS and four workers:\n{plan}");
            assert_eq!(plan.workers, wanted, "{plan}");
        } else {
            assert!(plan.workers < wanted, "8 workers of {worker} B cannot fit:\n{plan}");
            assert!(plan.workers >= 4, "{plan}");
            assert!(!plan.did_not_fit.is_empty(), "the plan must say what did not fit:\n{plan}");
        }
        let expect = plan.device_bytes();
        excl.set_lanes(plan.workers).unwrap();
        let vram = match Vram::provision(&excl, &device, plan) {
            Ok(v) => v,
            Err(e) => panic!("provisioning {wanted} workers failed (the plan must never OOM): {e}"),
        };
        let after = device.mem_info().unwrap().0 as u64;
        let used = free - after;
        println!("  measured: free {free} B → {after} B, used {used} B, planned {expect} B");
        assert!(
            used.abs_diff(expect) <= slack.min(margin),
            "free memory dropped by {used} B but the plan allocates {expect} B (wanted {wanted})"
        );
        assert!(
            after + slack >= margin + (free - budget),
            "the margin was not kept: {after} B free, margin {margin} B"
        );
        assert_eq!(vram.arenas().len(), vram.plan().workers);
        vram.release(&excl, &device).unwrap();
        let back = measure_free(&excl, &device).unwrap();
        assert!(back + slack >= free, "release did not return the memory: {back} B free, was {free} B");
    }
}

/// Reservations: typed ranges of one arena, written and read back with random data, never
/// overlapping, reused after drop, with no driver allocation (free memory unchanged).
#[test]
#[ignore = "needs a CUDA GPU: cargo xtask gpu-bundle"]
fn reservations_are_disjoint_views_and_touch_no_driver_memory() {
    let Some(device) = testing::gpu_or_skip("reservations_are_disjoint_views_and_touch_no_driver_memory") else {
        return;
    };
    let _serial = serial();
    let policy = SharedPolicy::new(Lanes::new(1).unwrap());
    let stream = device.new_stream().unwrap();
    let excl = policy.exclusive(0).unwrap();
    let arena = crate::Arena::allocate(&excl, &device, "test", 64 * MIB).unwrap();
    drop(excl);

    let mut rng = rand::thread_rng();
    // Warm-up copy, so that anything the driver sets up lazily for copies is already there.
    {
        let mut warm = arena.reserve::<u64>(8).unwrap();
        warm.upload(&stream, &[7; 8]).unwrap();
    }
    let before = device.mem_info().unwrap().0 as u64;
    let lens = [1usize, 1000, 65_537, 1 << 20, 3];
    let mut held = Vec::new();
    let mut data = Vec::new();
    for &n in &lens {
        let mut r = arena.reserve::<u64>(n).unwrap();
        let d: Vec<u64> = (0..n).map(|_| rng.r#gen()).collect();
        r.upload(&stream, &d).unwrap();
        held.push(r);
        data.push(d);
    }
    for (i, a) in held.iter().enumerate() {
        assert_eq!(a.offset() % crate::ALIGN, 0);
        for b in &held[i + 1..] {
            assert!(
                a.offset() + a.span() <= b.offset() || b.offset() + b.span() <= a.offset(),
                "reservations overlap: [{}, +{}) and [{}, +{})",
                a.offset(),
                a.span(),
                b.offset(),
                b.span()
            );
        }
    }
    // Read back after all writes: a write that strayed into a neighbour shows up here.
    for (r, d) in held.iter().zip(&data) {
        let mut got = vec![0u64; d.len()];
        r.download(&stream, &mut got).unwrap();
        if let Some(i) = (0..d.len()).find(|&i| got[i] != d[i]) {
            panic!("reservation at offset {} index {i}: got {:#x}, wrote {:#x}", r.offset(), got[i], d[i]);
        }
    }
    let freed_offset = held[2].offset();
    held.remove(2);
    let again = arena.reserve::<u64>(lens[2]).unwrap();
    assert_eq!(again.offset(), freed_offset, "a dropped range is reused first-fit");
    let too_big = arena.reserve::<u8>(64 * MIB as usize).unwrap_err();
    assert!(matches!(too_big, VramError::ArenaFull { .. }), "{too_big}");
    // ~9 MiB are reserved; a driver allocation per reservation would show. 2 MiB of slack
    // for anything the driver does on its own.
    let after = device.mem_info().unwrap().0 as u64;
    assert!(
        before.abs_diff(after) <= 2 * MIB,
        "free device memory moved from {before} B to {after} B: reservations must not allocate"
    );

    let excl = policy.exclusive(0).unwrap();
    drop(held);
    drop(again);
    arena.release(&excl, &device).unwrap();
}
