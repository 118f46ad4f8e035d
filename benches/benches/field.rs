//! GPU benchmark of the field layer: Fr and Fp Montgomery products (and Fp squarings) per second and G1/G2
//! XYZZ mixed additions per second, with the ratio to the H200 integer ceiling
//! (ARCHITECTURE.md §6: ≈ 16.7 T IMAD/s; an Fp product ≈ 576 IMAD, an Fr product ≈ 256, the
//! textbook CIOS counts: kiln's Fr product needs 224, as r's two low limbs 1 and 2^32 - 1 and
//! each row's q = -t0 are handled without multiplies, so Fr may pass 100%).
//! Bars (issue 3): Fp products ≥ 50 % of the ceiling, G1 mixed adds ≥ 1.5 G/s.
//!
//! Each kernel (kernels/field/bench.cu) runs long dependent chains; one sample of its output
//! is checked against blstrs before timing, so a wrong kernel cannot report a rate.

use std::sync::Arc;

use ff::Field;
use group::Group;
use kiln_benches::{Row, median_of, print_table, push_row};
use kiln_cuda::cudarc::driver::{CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};
use kiln_cuda::{CudaResultExt, Device, StreamTimer, alloc_poisoned, check_stream};
use kiln_field::{DeviceLayout, Fp, G1Affine, G1Projective, G2Affine, G2Projective, Scalar};

/// Integer multiply-adds per second of the H200 (132 SMs × 64 IMAD/clk × 1.98 GHz).
const IMAD_CEILING: f64 = 16.7e12;
/// Independent chains per thread (LANES in bench.cu).
const LANES: usize = 4;
const BLOCK: u32 = 256;
const WARMUP: usize = 2;
const RUNS: usize = 10;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn upload<T: DeviceLayout>(stream: &Arc<CudaStream>, v: &[T]) -> Res<CudaSlice<u64>> {
    Ok(stream.clone_htod(T::as_u64s(v)).ctx("cuMemcpyHtoDAsync")?)
}

fn download<T: DeviceLayout>(stream: &Arc<CudaStream>, b: &CudaSlice<u64>) -> Res<Vec<T>> {
    Ok(T::from_u64s(&stream.clone_dtoh(b).ctx("cuMemcpyDtoH")?)?)
}

fn cfg(threads: u32) -> LaunchConfig {
    LaunchConfig { grid_dim: (threads.div_ceil(BLOCK), 1, 1), block_dim: (BLOCK, 1, 1), shared_mem_bytes: 0 }
}

/// What a chain kernel computes per step.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Chain {
    /// `acc = acc * m`.
    Mul,
    /// `acc = acc^2` (the `mul` input is ignored).
    Sqr,
}

/// Products per second of `kernel` (fr or fp chain); checks thread 0 and the last thread first.
#[allow(clippy::too_many_arguments)]
fn mul_rate<T: DeviceLayout + Field>(
    chain: Chain,
    device: &Device,
    kernel: &str,
    threads: u32,
    iters: u32,
    rows: &mut Vec<Row>,
    name: &str,
    imad_per_product: f64,
) -> Res<()> {
    let f: CudaFunction = device.function(kiln_kernels::field::bench::MODULE, kernel)?;
    let stream = device.new_stream()?;
    let mut rng = rand::thread_rng();
    let n = threads as usize;
    let init: Vec<T> = (0..n * LANES).map(|_| T::random(&mut rng)).collect();
    let mul: Vec<T> = (0..n).map(|_| T::random(&mut rng)).collect();
    let (in_d, mul_d) = (upload(&stream, &init)?, upload(&stream, &mul)?);
    let mut out = alloc_poisoned::<u64>(&stream, n * LANES * T::WORDS)?;
    let run = |out: &mut CudaSlice<u64>, iters: u32| -> Res<f64> {
        let timer = StreamTimer::start(&stream)?;
        let mut l = stream.launch_builder(&f);
        l.arg(&in_d).arg(&mul_d).arg(out).arg(&threads).arg(&iters);
        // SAFETY: matches `<kernel>(const T* in, const T* mul, T* out, u32 threads, u32 iters)`:
        // in/out hold LANES*threads values, mul holds threads values; the kernel checks t < threads.
        unsafe { l.launch(cfg(threads)) }.ctx("cuLaunchKernel(bench mul)")?;
        let ms = timer.stop_ms()?;
        check_stream(&stream)?;
        Ok(f64::from(ms))
    };
    // Correctness first, on a short chain.
    run(&mut out, 3)?;
    let got: Vec<T> = download(&stream, &out)?;
    for t in [0, n - 1] {
        for k in 0..LANES {
            let x = init[LANES * t + k];
            let want = match chain {
                Chain::Mul => x * mul[t] * mul[t] * mul[t],
                Chain::Sqr => x.square().square().square(),
            };
            if got[LANES * t + k] != want {
                return Err(
                    format!("{kernel}: thread {t} lane {k} differs from blstrs; not timing a wrong kernel").into()
                );
            }
        }
    }
    let ms = median_of(WARMUP, RUNS, || run(&mut out, iters))?;
    let products = n as f64 * LANES as f64 * f64::from(iters);
    let rate = products / (ms * 1e-3);
    let ceiling_rate = IMAD_CEILING / imad_per_product;
    push_row(
        rows,
        Row {
            op: name.into(),
            size: format!("{products:.3e} products"),
            median_ms: ms,
            runs: RUNS,
            floor_ms: Some(products / ceiling_rate * 1e3),
            note: format!(
                "{:.2} G products/s = {:.1}% of the IMAD ceiling ({imad_per_product} IMAD each)",
                rate / 1e9,
                100.0 * rate / ceiling_rate
            ),
        },
    );
    Ok(())
}

/// Mixed additions per second; checks a few threads against blstrs first.
fn add_rate<G, A>(
    device: &Device,
    kernel: &str,
    threads: u32,
    iters: u32,
    rows: &mut Vec<Row>,
    name: &str,
    bar: &str,
) -> Res<()>
where
    G: DeviceLayout + Group + From<A> + PartialEq,
    A: DeviceLayout + From<G>,
{
    let f = device.function(kiln_kernels::field::bench::MODULE, kernel)?;
    let stream = device.new_stream()?;
    let mut rng = rand::thread_rng();
    let npts: u32 = 64;
    let proj: Vec<G> = (0..npts).map(|_| G::random(&mut rng)).collect();
    let pts: Vec<A> = proj.iter().map(|p| A::from(*p)).collect();
    let pts_d = upload(&stream, &pts)?;
    let n = threads as usize;
    let mut out = alloc_poisoned::<u64>(&stream, n * G::WORDS)?;
    let run = |out: &mut CudaSlice<u64>, iters: u32| -> Res<f64> {
        let timer = StreamTimer::start(&stream)?;
        let mut l = stream.launch_builder(&f);
        l.arg(&pts_d).arg(&npts).arg(out).arg(&threads).arg(&iters);
        // SAFETY: matches `<kernel>(const affine* pts, u32 npts, jacobian* out, u32 threads,
        // u32 iters)`: pts holds npts points, out holds `threads` points; t < threads is checked.
        unsafe { l.launch(cfg(threads)) }.ctx("cuLaunchKernel(bench add)")?;
        let ms = timer.stop_ms()?;
        check_stream(&stream)?;
        Ok(f64::from(ms))
    };
    run(&mut out, 2)?;
    let got: Vec<G> = download(&stream, &out)?;
    for t in [0usize, 1, 63, n - 1] {
        let mut sum = G::identity();
        for k in 0..LANES {
            sum += proj[(t + k) % npts as usize];
        }
        if got[t] != sum.double() {
            return Err(format!("{kernel}: thread {t} differs from blstrs; not timing a wrong kernel").into());
        }
    }
    let ms = median_of(WARMUP, RUNS, || run(&mut out, iters))?;
    let adds = n as f64 * LANES as f64 * f64::from(iters);
    let rate = adds / (ms * 1e-3);
    push_row(
        rows,
        Row {
            op: name.into(),
            size: format!("{adds:.3e} adds"),
            median_ms: ms,
            runs: RUNS,
            floor_ms: None,
            note: format!("{:.3} G adds/s ({bar})", rate / 1e9),
        },
    );
    Ok(())
}

fn main() -> Res<()> {
    let device = match Device::open(0) {
        Ok(d) => d,
        Err(e) => {
            println!("field bench skipped: {e}");
            return Ok(());
        }
    };
    let sms = device.sm_count()?;
    // Enough threads to fill every SM several times over.
    let threads = sms * 8 * BLOCK;
    let mut rows = Vec::new();
    mul_rate::<Scalar>(Chain::Mul, &device, "bench_fr_mul", threads, 2000, &mut rows, "Fr mont mul", 256.0)?;
    mul_rate::<Fp>(Chain::Mul, &device, "bench_fp_mul", threads, 1000, &mut rows, "Fp mont mul", 576.0)?;
    if let Some(r) = rows.last() {
        println!("bar: Fp products >= 50% of the ceiling: {}", r.note);
    }
    // kiln_mont::sqr is mul(a, a) (paired carry chains beat a dedicated squaring): 576 IMAD.
    mul_rate::<Fp>(Chain::Sqr, &device, "bench_fp_sqr", threads, 1000, &mut rows, "Fp mont sqr", 576.0)?;
    add_rate::<G1Projective, G1Affine>(
        &device,
        "bench_g1_add_affine",
        threads,
        100,
        &mut rows,
        "G1 XYZZ mixed add",
        "bar 1.5 G/s",
    )?;
    add_rate::<G2Projective, G2Affine>(
        &device,
        "bench_g2_add_affine",
        threads,
        30,
        &mut rows,
        "G2 XYZZ mixed add",
        "no bar",
    )?;
    print_table("field and curve arithmetic", &rows);
    Ok(())
}
