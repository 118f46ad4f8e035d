//! CPU bench: kiln's `cpu::fft` against bellperson's `EvaluationDomain::fft` on the same
//! input, at 2^16 and 2^20. Criterion reports each; the summary at the end prints the ratio
//! (kiln / bellperson, median of interleaved runs in this one process, so both see the
//! same machine state).

use std::time::Instant;

use bellperson::domain::EvaluationDomain;
use blstrs::Scalar;
use criterion::{BenchmarkId, Criterion};
use ec_gpu_gen::threadpool::Worker;
use ff::Field;
use kiln_ntt::{Domain, cpu};

fn inputs(log_n: u32) -> Vec<Scalar> {
    let mut rng = rand::thread_rng();
    (0..1usize << log_n).map(|_| Scalar::random(&mut rng)).collect()
}

fn bellperson_fft(worker: &Worker, v: Vec<Scalar>) -> Vec<Scalar> {
    let mut d = EvaluationDomain::from_coeffs(v).expect("domain");
    d.fft(worker, &mut None).expect("bellperson fft");
    d.into_coeffs()
}

fn main() {
    let mut c = Criterion::default().sample_size(10).configure_from_args();
    let worker = Worker::new();
    let mut summary = Vec::new();
    for log_n in [16u32, 20] {
        let d = Domain::new(log_n).expect("domain");
        let input = inputs(log_n);
        // Same result first: a fast wrong transform must not report.
        let mut ours = input.clone();
        cpu::fft(&d, &mut ours).expect("kiln fft");
        assert!(ours == bellperson_fft(&worker, input.clone()), "kiln and bellperson differ at 2^{log_n}");

        let mut group = c.benchmark_group("cpu_fft");
        group.bench_with_input(BenchmarkId::new("kiln", format!("2^{log_n}")), &input, |b, input| {
            b.iter_batched_ref(|| input.clone(), |a| cpu::fft(&d, a).unwrap(), criterion::BatchSize::LargeInput)
        });
        group.bench_with_input(BenchmarkId::new("bellperson", format!("2^{log_n}")), &input, |b, input| {
            b.iter_batched(|| input.clone(), |a| bellperson_fft(&worker, a), criterion::BatchSize::LargeInput)
        });
        group.finish();

        let (mut k, mut bp) = (Vec::new(), Vec::new());
        for _ in 0..15 {
            let mut a = input.clone();
            let t = Instant::now();
            cpu::fft(&d, &mut a).unwrap();
            k.push(t.elapsed().as_secs_f64() * 1e3);
            let a = input.clone();
            let t = Instant::now();
            std::hint::black_box(bellperson_fft(&worker, a));
            bp.push(t.elapsed().as_secs_f64() * 1e3);
        }
        k.sort_by(f64::total_cmp);
        bp.sort_by(f64::total_cmp);
        summary.push((log_n, k[k.len() / 2], bp[bp.len() / 2]));
    }
    c.final_summary();
    println!("\n| size | kiln cpu::fft ms | bellperson fft ms | kiln/bellperson |");
    println!("| --- | ---: | ---: | ---: |");
    for (log_n, k, bp) in summary {
        println!("| 2^{log_n} | {k:.2} | {bp:.2} | {:.2} |", k / bp);
    }
}
