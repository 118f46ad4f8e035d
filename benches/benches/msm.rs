//! GPU benchmark: MSM in G1 and G2 (bases and scalars resident, uniform random scalars), and
//! the split path on a Filecoin-PoRep-like vector (51% zero, 47% one, 2% other). Each size is
//! checked through known-discrete-log bases (G1: also the device-scalar run); then one
//! profiled run prints the milliseconds of each kernel.
//!
//! `KILN_BENCH_SMALL=1` (or `KILN_TEST_SMALL=1`) runs 2^16 only. `KILN_BENCH_ONLY=g1:24,split:24`
//! runs only the rows named (`g1`, `g2` or `split`, then log2 of the size): one kernel launch
//! to find under a profiler such as `ncu`.

use blstrs::{G1Projective, Scalar};
use ff::Field;
use kiln_benches::{Row, median_of, print_table, push_row};
use kiln_cuda::cudarc::driver::CudaSlice;
use kiln_cuda::{Device, PoolMemory, StreamTimer};
use kiln_field::DeviceLayout;
use kiln_msm::dlog::{KnownDlog, random_scalars};
use kiln_msm::gpu::{Curve, GpuBases, MsmContext, Scalars, scratch_bytes};

/// ARCHITECTURE.md §6: ~0.35 ns per mixed XYZZ add at the H200's integer ceiling.
const NS_PER_ADD_FLOOR: f64 = 0.35;
const RUNS: usize = 5;

fn small() -> bool {
    ["KILN_BENCH_SMALL", "KILN_TEST_SMALL"].iter().any(|v| std::env::var(v).is_ok_and(|x| x == "1"))
}

/// `KILN_BENCH_ONLY`'s rows as (g1 | g2 | split, log2 size); exits with a message on a bad list.
fn only() -> Option<Vec<(String, u32)>> {
    let list = std::env::var("KILN_BENCH_ONLY").ok()?;
    let parse = |item: &str| -> Option<(String, u32)> {
        let (what, log_n) = item.trim().split_once(':')?;
        let log_n = log_n.parse().ok().filter(|l| (1..=28).contains(l))?;
        ["g1", "g2", "split"].contains(&what).then(|| (what.to_string(), log_n))
    };
    let rows: Option<Vec<_>> = list.split(',').map(parse).collect();
    if rows.is_none() {
        eprintln!("msm bench: KILN_BENCH_ONLY={list:?}: expected items like g1:24, g2:20 or split:24");
        std::process::exit(2);
    }
    rows
}

fn row(op: &str, log_n: u32, ms: f64, ctx: &MsmContext, n: usize, bar: &str) -> Row {
    let plan = ctx.plan(n);
    let adds = n as f64 * plan.windows as f64;
    let floor = n as f64 * 255usize.div_ceil(plan.c as usize) as f64 * NS_PER_ADD_FLOOR * 1e-6;
    Row {
        op: op.into(),
        size: format!("2^{log_n}"),
        median_ms: ms,
        runs: RUNS,
        floor_ms: Some(floor),
        note: format!(
            "c={} {:.3} ns/bucket add, scratch {:.1} MiB{bar}",
            plan.c,
            ms * 1e6 / adds,
            ctx.scratch_bytes() as f64 / (1 << 20) as f64
        ),
    }
}

/// The scalars uploaded to the device: MSMs are timed on resident scalars (like h after the
/// NTT), since the upload from host memory is a copy-engine cost the prover overlaps.
fn resident(ctx: &MsmContext, scalars: &[Scalar]) -> CudaSlice<u64> {
    let words = Scalar::as_u64s(scalars);
    let mut dev = ctx.stream().alloc_zeros::<u64>(words.len()).expect("alloc scalars");
    ctx.stream().memcpy_htod(words, &mut dev).expect("upload scalars");
    dev
}

/// Runs `f` with per-kernel profiling on and returns "kernel ms, ..." for the log.
fn profiled(ctx: &mut MsmContext, f: impl FnOnce(&mut MsmContext)) -> String {
    ctx.set_profiling(true).expect("profiling");
    f(ctx);
    let times = ctx.take_profile().expect("profile");
    ctx.set_profiling(false).expect("profiling");
    times.iter().map(|(k, ms)| format!("{k} {ms:.2}")).collect::<Vec<_>>().join(", ")
}

fn bench_curve(device: &std::sync::Arc<Device>, curve: Curve, logs: &[u32], rows: &mut Vec<Row>) {
    let Some(&max_log) = logs.iter().max() else { return };
    let cap = 1usize << max_log;
    let mut ctx = MsmContext::new(device, curve, cap, &PoolMemory).expect("MsmContext");
    assert_eq!(ctx.scratch_bytes(), scratch_bytes(cap, curve));
    for &log_n in logs {
        let n = 1usize << log_n;
        let dl = KnownDlog::random(rand::thread_rng());
        let scalars = random_scalars(n, rand::random());
        let op = match curve {
            Curve::G1 => "msm G1",
            Curve::G2 => "msm G2",
        };
        let bases = match curve {
            Curve::G1 => {
                let b = GpuBases::g1(device, &dl.g1_bases(n), &PoolMemory).expect("upload");
                let got = ctx.msm_g1(&b, Scalars::Host(&scalars)).expect("msm");
                assert_eq!(got, dl.expected_g1(&scalars), "{op} 2^{log_n}: wrong result, not timing it");
                b
            }
            Curve::G2 => {
                let b = GpuBases::g2(device, &dl.g2_bases(n), &PoolMemory).expect("upload");
                let got = ctx.msm_g2(&b, Scalars::Host(&scalars)).expect("msm");
                assert_eq!(got, dl.expected_g2(&scalars), "{op} 2^{log_n}: wrong result, not timing it");
                b
            }
        };
        let dev = resident(&ctx, &scalars);
        // Returns the G1 result (G2 is checked above, through host scalars).
        let once = |ctx: &mut MsmContext| -> Result<Option<G1Projective>, kiln_msm::MsmError> {
            let s = Scalars::Device(&dev, n);
            Ok(match curve {
                Curve::G1 => Some(ctx.msm_g1(&bases, s)?),
                Curve::G2 => ctx.msm_g2(&bases, s).map(|_| None)?,
            })
        };
        let ms = median_of(1, RUNS, || -> Result<f64, kiln_msm::MsmError> {
            let t = StreamTimer::start(ctx.stream())?;
            once(&mut ctx)?;
            Ok(t.stop_ms()? as f64)
        })
        .expect("timing");
        let kernels = profiled(&mut ctx, |ctx| {
            if let Some(got) = once(ctx).expect("profiled run") {
                assert_eq!(got, dl.expected_g1(&scalars), "{op} 2^{log_n}: wrong result from device scalars");
            }
        });
        println!("{op} 2^{log_n} kernels (ms): {kernels}");
        let bar = match (curve, log_n) {
            // Issue 20's bars and goals.
            (Curve::G1, 24) => " (bar 100, goal 70)",
            (Curve::G1, 26) => " (bar 350, goal 250)",
            (Curve::G1, 27) => " (bar 700, goal 500)",
            (Curve::G2, 24) => " (bar 250, goal 150)",
            _ => "",
        };
        push_row(rows, row(op, log_n, ms, &ctx, n, bar));
    }
}

fn bench_split(device: &std::sync::Arc<Device>, log_n: u32, rows: &mut Vec<Row>) {
    use rand::Rng;
    let n = 1usize << log_n;
    let mut rng = rand::thread_rng();
    let scalars: Vec<Scalar> = (0..n)
        .map(|_| match rng.gen_range(0..100) {
            0..51 => Scalar::ZERO,
            51..98 => Scalar::ONE,
            _ => Scalar::random(&mut rng),
        })
        .collect();
    let dl = KnownDlog::random(rand::thread_rng());
    let bases = GpuBases::g1(device, &dl.g1_bases(n), &PoolMemory).expect("upload");
    let mut ctx = MsmContext::new(device, Curve::G1, n, &PoolMemory).expect("MsmContext");
    let sp = ctx.split(Scalars::Host(&scalars)).expect("split");
    let got = ctx.msm_g1_split(&bases, &sp).expect("split msm");
    assert_eq!(got, dl.expected_g1(&scalars), "split 2^{log_n}: wrong result, not timing it");
    let dev = resident(&ctx, &scalars);
    let ms = median_of(1, RUNS, || -> Result<f64, kiln_msm::MsmError> {
        let t = StreamTimer::start(ctx.stream())?;
        let sp = ctx.split(Scalars::Device(&dev, n))?;
        let _ = ctx.msm_g1_split(&bases, &sp)?;
        Ok(t.stop_ms()? as f64)
    })
    .expect("timing");
    let kernels = profiled(&mut ctx, |ctx| {
        let sp2 = ctx.split(Scalars::Device(&dev, n)).expect("split");
        assert_eq!(ctx.msm_g1_split(&bases, &sp2).expect("split msm"), got, "split 2^{log_n}: device scalars");
    });
    println!("msm G1 split 2^{log_n} kernels (ms): {kernels}");
    let bar = if log_n == 24 { " (bar 20, goal 8)" } else { "" };
    let mut r = row("msm G1 split 51/47/2", log_n, ms, &ctx, sp.others.max(1), bar);
    r.floor_ms = None;
    r.note = format!("{} ones, {} others; {}", sp.ones, sp.others, r.note);
    push_row(rows, r);
}

fn main() {
    let device = match Device::open(0) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("msm bench: skipped: {e}");
            return;
        }
    };
    let mut rows = Vec::new();
    if let Some(only) = only() {
        for (what, log_n) in only {
            match what.as_str() {
                "g1" => bench_curve(&device, Curve::G1, &[log_n], &mut rows),
                "g2" => bench_curve(&device, Curve::G2, &[log_n], &mut rows),
                _ => bench_split(&device, log_n, &mut rows),
            }
        }
    } else if small() {
        bench_curve(&device, Curve::G1, &[16], &mut rows);
        bench_curve(&device, Curve::G2, &[16], &mut rows);
        bench_split(&device, 16, &mut rows);
    } else {
        bench_split(&device, 24, &mut rows);
        bench_curve(&device, Curve::G1, &[20, 22, 24, 26, 27], &mut rows);
        bench_curve(&device, Curve::G2, &[20, 22, 24], &mut rows);
    }
    print_table("MSM (bases and scalars resident, uniform random scalars)", &rows);
}
