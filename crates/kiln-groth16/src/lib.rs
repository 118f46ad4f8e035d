//! Groth16 over BLS12-381: parameters, synthesis, CPU and GPU provers, verifier.
//!
//! Everything is byte-compatible with bellperson 0.27: parameter files written by either
//! load in the other, and proofs made by either verify with the other's verifier.
//!
//! - [`params`]: bellperson's parameter file format (memory-mapped, validated in parallel).
//! - [`synth`]: bellpepper-core circuits into A/B/C evaluations, assignments and densities.
//! - [`recorded`]: the same, fast per proof: matrices recorded once per circuit shape, then
//!   witness generation and parallel sparse products.
//! - [`setup`]: random setup from an RNG (toxic waste: tests, demos, benchmarks).
//! - [`prover`]: a [`Prover`] built once from the parameters: [`CpuProver`] anywhere,
//!   `GpuProver` (feature `cuda`) with the SRS resident on a GPU; every proof verified before
//!   it is returned; the conformance suite both pass.
//! - [`verifier`]: single and batch verification.
//! - [`circuits`]: built-in circuits with a size knob.
//! - [`busy`]: the union of overlapping activities' time (a device's busy time).
#![doc = include_str!("../README.md")]

pub mod atomic;
pub mod busy;
pub mod circuits;
pub mod error;
pub mod params;
pub mod progress;
pub mod proof;
pub mod prover;
pub mod recorded;
pub mod setup;
pub mod synth;
pub mod verifier;

pub use busy::{BusyClock, BusySpan, IdleEdges};
pub use error::{Groth16Error, ParamsError, PointFault, ProofError, VerifyError, WriteError};
pub use params::{Check, Parameters, VerifyingKey};
pub use progress::{NoProgress, Progress};
pub use proof::{PROOF_BYTES, Proof, ProofReader};
pub use prover::{
    CpuProver, DeviceMemoryUse, ProveOptions, Prover, Sums, Timings, create_proof, create_proofs,
    create_proofs_recorded, create_proofs_with, prove_assignments, prove_witnesses,
};
#[cfg(feature = "cuda")]
pub use prover::{GpuOptions, GpuProver, SrsMode, parse_bytes};
pub use recorded::{Shape, Witness};
#[cfg(feature = "cuda")]
pub use setup::gpu::gpu_setup;
pub use setup::{Trapdoor, random_setup, setup_with_trapdoor};
pub use verifier::{PreparedVerifyingKey, verify, verify_proof, verify_proofs_batch};

/// Re-exported so that users name one `Scalar` type.
pub use blstrs::Scalar;
