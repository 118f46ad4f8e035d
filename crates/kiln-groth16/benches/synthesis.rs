//! Per-proof synthesis: `synth::synthesize` (constraints built and evaluated every proof)
//! against the recorded path (`Shape::witness` + `Shape::evaluate`), side by side.
//! `cargo bench -p kiln-groth16 --bench synthesis`
//!
//! Environment: `KILN_BENCH_LOGS` (default `16,18,20`), `KILN_BENCH_CIRCUITS` (default
//! `porep,squaring`), `KILN_BENCH_REPEAT` (default 5). Runs alternate the two paths so that
//! machine noise hits both alike; medians are reported.
//!
//! Columns: `synthesize` the reference; `witness` the value closures alone and `spmv`
//! a, b, c = A·z, B·z, C·z, both into buffers reused across proofs (what a prover writing
//! into its pinned buffers pays); `shape.synthesize` witness + evaluate into a fresh
//! `Assignment` (fresh memory's page faults included: the like-for-like of `synthesize`);
//! `record` the one-off recording of the shape.

mod common;

use std::time::{Duration, Instant};

use blstrs::Scalar;
use common::median;
use ff::Field;
use kiln_groth16::circuits::Builtin;
use kiln_groth16::recorded::Shape;
use kiln_groth16::synth::synthesize;

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let common::Config { logs, kinds, repeat } = common::config("16,18,20", "porep,squaring", 5);
    println!("per-proof synthesis, {} threads, median of {repeat} runs, times in ms", rayon::current_num_threads());
    println!(
        "| circuit | log2 | synthesize | witness | spmv | witness + spmv | speed-up | shape.synthesize | speed-up | \
         record (once) | shape MiB | bytes/constraint |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for kind in kinds {
        for &log in &logs {
            let circuit = Builtin::new(kind, 1 << log, 11);
            let start = Instant::now();
            let shape = Shape::record(circuit).expect("record");
            let record = start.elapsed();
            let n = shape.num_constraints();
            // Reused across proofs, as a prover's (pinned) buffers are.
            let (mut a, mut b, mut c) = (vec![Scalar::ZERO; n], vec![Scalar::ZERO; n], vec![Scalar::ZERO; n]);
            let mut w = shape.witness(circuit).expect("witness");
            let (mut reference, mut witness, mut spmv, mut fresh) = (vec![], vec![], vec![], vec![]);
            for _ in 0..repeat {
                let start = Instant::now();
                let expected = synthesize(circuit).expect("synthesize");
                reference.push(start.elapsed());

                let start = Instant::now();
                shape.witness_into(circuit, &mut w).expect("witness");
                witness.push(start.elapsed());
                let start = Instant::now();
                shape.evaluate_into(&w.input, &w.aux, &mut a, &mut b, &mut c).expect("evaluate_into");
                spmv.push(start.elapsed());
                assert!(a == expected.a && b == expected.b && c == expected.c, "{kind} 2^{log}: a, b, c differ");
                drop(expected);

                let start = Instant::now();
                let asg = shape.synthesize(circuit).expect("shape.synthesize");
                fresh.push(start.elapsed());
                drop(asg);
            }
            let (reference, witness, spmv, fresh) = (median(reference), median(witness), median(spmv), median(fresh));
            let ratio = |d: Duration| reference.as_secs_f64() / d.as_secs_f64();
            println!(
                "| {} | {log} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1}x | {:.1} | {:.1}x | {:.1} | {:.1} | {:.1} |",
                kind.name(),
                ms(reference),
                ms(witness),
                ms(spmv),
                ms(witness + spmv),
                ratio(witness + spmv),
                ms(fresh),
                ratio(fresh),
                ms(record),
                shape.heap_bytes() as f64 / (1 << 20) as f64,
                shape.heap_bytes() as f64 / n as f64,
            );
        }
    }
}
