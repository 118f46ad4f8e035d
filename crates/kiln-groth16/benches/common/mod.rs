//! What the benchmarks of this crate share: their environment knobs and the median.

use std::time::Duration;

use kiln_groth16::circuits::Kind;

/// One benchmark run's settings.
pub struct Config {
    /// log2 of the sizes.
    pub logs: Vec<u32>,
    /// The circuits.
    pub kinds: Vec<Kind>,
    /// Runs per measurement.
    pub repeat: usize,
}

/// Settings from `KILN_BENCH_LOGS`, `KILN_BENCH_CIRCUITS` and `KILN_BENCH_REPEAT`, with these
/// defaults. `cargo bench` passes `--bench`; `cargo test --benches` passes nothing: then one
/// tiny size, once, so that CI only checks that the benchmark runs.
pub fn config(logs: &str, kinds: &str, repeat: usize) -> Config {
    let quick = !std::env::args().any(|a| a == "--bench");
    let list = |name: &str, default: &str| -> Vec<String> {
        std::env::var(name).unwrap_or_else(|_| default.into()).split(',').map(|s| s.trim().to_string()).collect()
    };
    Config {
        logs: if quick {
            vec![8]
        } else {
            list("KILN_BENCH_LOGS", logs).iter().map(|s| s.parse().expect("KILN_BENCH_LOGS: numbers")).collect()
        },
        kinds: list("KILN_BENCH_CIRCUITS", kinds).iter().map(|s| s.parse().expect("circuit name")).collect(),
        repeat: if quick {
            1
        } else {
            std::env::var("KILN_BENCH_REPEAT").ok().and_then(|s| s.parse().ok()).unwrap_or(repeat)
        },
    }
}

/// The median of some timings.
pub fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}
