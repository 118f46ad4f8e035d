//! The MSM conformance kit (kiln_msm::conformance) against the CPU MSM. The GPU MSM runs the
//! same kit in tests/gpu.rs.

use kiln_msm::conformance::{CpuMsm, check_msm};

#[test]
fn cpu_msm_passes_the_conformance_kit() {
    let seed: u64 = rand::random();
    eprintln!("seed {seed}");
    check_msm(&mut CpuMsm, &[(1 << 12) + 1], seed);
}
