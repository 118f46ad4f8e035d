//! The NTT conformance kit (kiln_ntt::conformance) against the CPU path. The GPU path runs
//! the same kit in tests/gpu.rs.

use kiln_ntt::conformance::{CpuNtt, check_ntt};

#[test]
fn cpu_ntt_passes_the_conformance_kit() {
    let seed: u64 = rand::random();
    eprintln!("seed {seed}");
    check_ntt(&mut CpuNtt, &(0..=12).chain([14]).collect::<Vec<u32>>(), seed);
}
