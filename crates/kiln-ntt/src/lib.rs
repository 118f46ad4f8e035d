//! NTT over BLS12-381 Fr on CPU and GPU, and the Groth16 H step.
//!
//! - [`Domain`]: a radix-2 evaluation domain (2^0 … 2^28) with bellperson's
//!   `EvaluationDomain` semantics, so every result matches bellperson bit for bit.
//! - [`cpu`]: the parallel CPU path (the reference for the GPU path): `fft`, `ifft`,
//!   `coset_fft`, `icoset_fft`, `divide_by_z_on_coset` and the whole H step, `h_poly`.
//! - [`gpu`]: [`gpu::GpuDomain`], the same on data resident on a CUDA device, on a stream,
//!   in place, and the H step in a, b, c's own buffers ([`gpu::h_step_bytes`] for the tables).
//! - [`conformance`]: the kit every NTT backend passes ([`conformance::check_ntt`]), run
//!   against the CPU in CI and against the GPU on a GPU machine.
//!
//! ```
//! use ff::Field;
//! use kiln_ntt::{Domain, cpu};
//!
//! let d = Domain::for_size(5).unwrap(); // 8 points
//! let coeffs: Vec<blstrs::Scalar> = (1..=8u64).map(blstrs::Scalar::from).collect();
//! let mut a = coeffs.clone();
//! cpu::fft(&d, &mut a).unwrap();
//! assert_eq!(a[1], cpu::evaluate(&coeffs, d.omega()));
//! cpu::ifft(&d, &mut a).unwrap();
//! assert_eq!(a, coeffs);
//! ```

pub mod conformance;
pub mod cpu;
mod domain;
mod error;
#[cfg(feature = "cuda")]
pub mod gpu;
// The GPU launch plan and the launch lists built from it, shared by `gpu` and the host
// emulation tests, which run them without a GPU (also without the cuda feature: kiln-kernels,
// whose constants they need, is then a dev-dependency).
#[cfg(test)]
mod host_emulation;
#[cfg(any(feature = "cuda", test))]
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
mod launch;
#[cfg(any(feature = "cuda", test))]
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
mod plan;

pub use domain::{Domain, MAX_LOG_SIZE};

/// The README's examples, compiled as doctests (the GPU ones `no_run`); they name the GPU
/// API too, so only with the `cuda` feature.
#[doc = include_str!("../README.md")]
#[cfg(all(doctest, feature = "cuda"))]
pub struct ReadmeDoctests;
pub use error::NttError;
