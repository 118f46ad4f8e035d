//! GPU benchmark: the forward NTT and the whole Groth16 H step (7 transforms + pointwise)
//! over Fr, data resident on the device, median of 10 runs after warm-up; and the H step
//! with its input streamed from pinned host memory (`h_step_from_host`: uploads on a copy
//! stream overlapped with the transforms; the time includes the uploads), next to the time
//! of the three uploads alone.
//!
//! Each size is checked once against the CPU path before it is timed: the forward NTT at
//! every size, the H step up to 2^24 (above that the CPU reference takes too long; the GPU
//! tests cover 2^27 with a round trip and Horner evaluations).
//!
//! `KILN_BENCH_SMALL=1` (or `KILN_TEST_SMALL=1`) runs 2^16 only; `KILN_BENCH_LOGS=24,27`
//! runs the listed sizes (e.g. one size under a profiler).

use std::sync::Arc;

use blstrs::Scalar;
use cudarc::driver::{CudaSlice, CudaStream, PinnedHostSlice};
use ff::Field;
use kiln_benches::{Row, median_of, print_table, push_row};
use kiln_cuda::{CudaResultExt, Device, StreamTimer, alloc_pinned, check_stream};
use kiln_field::DeviceLayout;
use kiln_ntt::gpu::{GpuDomain, HostInput};
use kiln_ntt::{Domain, NttError, cpu};
use rand::SeedableRng;
use rayon::prelude::*;

const RUNS: usize = 10;
/// ARCHITECTURE.md §6: integer ceiling of the H200 (IMAD/s) and IMAD per Fr butterfly.
const IMAD_PER_S: f64 = 16.7e12;
const IMAD_PER_BUTTERFLY: f64 = 230.0;
/// Largest size whose H step is checked against the CPU before timing.
const H_CHECK_MAX_LOG: u32 = 24;

fn small() -> bool {
    ["KILN_BENCH_SMALL", "KILN_TEST_SMALL"].iter().any(|v| std::env::var(v).is_ok_and(|x| x == "1"))
}

/// Compute floor of one transform of 2^log_n: (n/2)·log n butterflies at the integer ceiling.
fn transform_floor_ms(log_n: u32) -> f64 {
    let butterflies = (1u64 << log_n) as f64 / 2.0 * log_n as f64;
    butterflies * IMAD_PER_BUTTERFLY / IMAD_PER_S * 1e3
}

/// Fresh random scalars, generated in parallel (2^27 of them take a while on one core).
fn random(n: usize) -> Vec<Scalar> {
    let seed: u64 = rand::random();
    let mut out = vec![Scalar::ZERO; n];
    out.par_chunks_mut(1 << 14).enumerate().for_each(|(i, c)| {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        c.iter_mut().for_each(|v| *v = Scalar::random(&mut rng));
    });
    out
}

fn upload(stream: &Arc<CudaStream>, v: &[Scalar]) -> CudaSlice<u64> {
    stream.clone_htod(Scalar::as_u64s(v)).ctx("cuMemcpyHtoD").expect("upload")
}

fn download(stream: &Arc<CudaStream>, d: &CudaSlice<u64>) -> Vec<Scalar> {
    check_stream(stream).expect("stream");
    Scalar::from_u64s(&stream.clone_dtoh(d).ctx("cuMemcpyDtoH").expect("download")).expect("whole scalars")
}

fn bench_size(device: &Arc<Device>, log_n: u32, rows: &mut Vec<Row>) {
    let stream = device.new_stream().expect("stream");
    let d = Domain::new(log_n).expect("domain");
    let gd = GpuDomain::new(device, &stream, &d, &kiln_cuda::PoolMemory).expect("GpuDomain");
    let n = d.size();

    // Forward: check once, then time in place (the data's content does not change the work).
    let input = random(n);
    let mut buf = upload(&stream, &input);
    gd.forward(&stream, &mut buf).expect("forward");
    let mut want = input.clone();
    cpu::fft(&d, &mut want).expect("cpu fft");
    assert!(download(&stream, &buf) == want, "forward 2^{log_n}: GPU differs from CPU, not timing it");
    let ms = median_of(2, RUNS, || -> Result<f64, NttError> {
        let t = StreamTimer::start(&stream)?;
        gd.forward(&stream, &mut buf)?;
        Ok(t.stop_ms()? as f64)
    })
    .expect("timing forward");
    let bar = match log_n {
        24 => " (bar 4, goal 3)",
        27 => " (bar 50, goal 35)",
        _ => "",
    };
    push_row(
        rows,
        Row {
            op: "ntt forward".into(),
            size: format!("2^{log_n}"),
            median_ms: ms,
            runs: RUNS,
            floor_ms: Some(transform_floor_ms(log_n)),
            note: format!("{:.1} GB/s per pass over the data{bar}", (n * 64) as f64 / (ms * 1e6)),
        },
    );
    drop(buf);

    // H step: a, b, c evaluations → h in a.
    let (a, b) = (input, random(n));
    let c: Vec<Scalar> = a.par_iter().zip(&b).map(|(x, y)| x * y).collect();
    let (mut da, mut db, mut dc) = (upload(&stream, &a), upload(&stream, &b), upload(&stream, &c));
    let checked = log_n <= H_CHECK_MAX_LOG;
    let want = if checked {
        gd.h_step(&stream, &mut da, &mut db, &mut dc).expect("h_step");
        let want = cpu::h_poly(&d, a.clone(), b.clone(), c.clone()).expect("cpu h_poly");
        assert!(download(&stream, &da) == want, "H step 2^{log_n}: GPU differs from CPU, not timing it");
        Some(want)
    } else {
        None
    };
    let ms = median_of(2, RUNS, || -> Result<f64, NttError> {
        let t = StreamTimer::start(&stream)?;
        gd.h_step(&stream, &mut da, &mut db, &mut dc)?;
        Ok(t.stop_ms()? as f64)
    })
    .expect("timing h_step");
    push_row(
        rows,
        Row {
            op: "H step (7 NTT)".into(),
            size: format!("2^{log_n}"),
            median_ms: ms,
            runs: RUNS,
            floor_ms: Some(7.0 * transform_floor_ms(log_n)),
            note: format!(
                "checked vs CPU: {}{}",
                if log_n <= H_CHECK_MAX_LOG { "yes" } else { "forward only" },
                if log_n == 27 { " (bar 350, goal 250)" } else { "" }
            ),
        },
    );
    let resident_ms = ms;

    // H step from pinned host memory: the uploads of a, b, c on a copy stream, overlapped with
    // the transforms. Write-combined pinned buffers: the host only writes them.
    let copy_stream = device.new_stream().expect("copy stream");
    let pin = |v: &[Scalar]| {
        let mut p = alloc_pinned::<u64>(device, v.len() * 4, true).expect("pinned");
        p.as_mut_slice().ctx("pinned as_mut_slice").expect("pinned").copy_from_slice(Scalar::as_u64s(v));
        p
    };
    let (pa, pb, pc) = (pin(&a), pin(&b), pin(&c));
    drop((a, b, c));
    if let Some(want) = want {
        gd.h_step_from_host(&stream, &copy_stream, pinned3(&pa, &pb, &pc), [&mut da, &mut db, &mut dc])
            .expect("from host");
        assert!(download(&stream, &da) == want, "H step from host 2^{log_n}: GPU differs from CPU, not timing it");
    }
    // The three uploads alone, on the copy stream: the least the overlapped H step can take
    // is max(uploads, compute); their sum is what no overlap would cost.
    let up_ms = median_of(2, RUNS, || -> Result<f64, NttError> {
        let t = StreamTimer::start(&copy_stream)?;
        for (h, dv) in [(&pa, &mut da), (&pb, &mut db), (&pc, &mut dc)] {
            copy_stream.memcpy_htod(h, dv).ctx("cuMemcpyHtoDAsync")?;
        }
        Ok(t.stop_ms()? as f64)
    })
    .expect("timing uploads");
    push_row(
        rows,
        Row {
            op: "upload a, b, c (pinned)".into(),
            size: format!("2^{log_n}"),
            median_ms: up_ms,
            runs: RUNS,
            floor_ms: None,
            note: format!("{:.1} GB/s host to device", (3 * n * 32) as f64 / (up_ms * 1e6)),
        },
    );
    let ms = median_of(2, RUNS, || -> Result<f64, NttError> {
        let t = StreamTimer::start(&stream)?;
        gd.h_step_from_host(&stream, &copy_stream, pinned3(&pa, &pb, &pc), [&mut da, &mut db, &mut dc])?;
        Ok(t.stop_ms()? as f64)
    })
    .expect("timing h_step_from_host");
    push_row(
        rows,
        Row {
            op: "H step from pinned host".into(),
            size: format!("2^{log_n}"),
            median_ms: ms,
            runs: RUNS,
            floor_ms: Some(resident_ms.max(up_ms)),
            note: format!(
                "incl. uploads; floor = max(resident, uploads); no overlap = {:.1} ms; checked vs CPU: {}",
                resident_ms + up_ms,
                if checked { "yes" } else { "no (size)" }
            ),
        },
    );
}

fn main() {
    let device = match Device::open(0) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("ntt bench: skipped: {e}");
            return;
        }
    };
    let logs: Vec<u32> = match std::env::var("KILN_BENCH_LOGS") {
        Ok(list) => list
            .split(',')
            .map(|v| v.trim().parse().unwrap_or_else(|_| panic!("KILN_BENCH_LOGS={list}: expected e.g. 24,27")))
            .collect(),
        Err(_) if small() => vec![16],
        Err(_) => vec![20, 22, 24, 26, 27],
    };
    let mut rows = Vec::new();
    for &log_n in &logs {
        bench_size(&device, log_n, &mut rows);
    }
    print_table("NTT over Fr and the H step", &rows);
}

/// The three H step inputs, all in pinned host memory.
fn pinned3<'a>(
    a: &'a PinnedHostSlice<u64>,
    b: &'a PinnedHostSlice<u64>,
    c: &'a PinnedHostSlice<u64>,
) -> [HostInput<'a>; 3] {
    [HostInput::Pinned(a), HostInput::Pinned(b), HostInput::Pinned(c)]
}
