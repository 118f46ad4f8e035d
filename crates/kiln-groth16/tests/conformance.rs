//! The prover conformance suite (kiln_groth16::prover::conformance) against the CPU prover.
//! The GPU prover runs the same suite in tests/gpu.rs.

use kiln_groth16::CpuProver;
use kiln_groth16::prover::conformance::check_prover;

#[test]
fn cpu_prover_passes_the_conformance_suite() {
    check_prover(64, &|params| Ok(CpuProver::new(params)));
}
