//! Multi-scalar multiplication (MSM) in G1 and G2 of BLS12-381, on the CPU and the GPU.
//!
//! - [`cpu`]: blst's multi-threaded Pippenger, with bellperson's [`Density`] masks. The
//!   reference for the GPU path and the path that runs without a GPU.
//! - [`dlog`]: large synthetic base sets with known discrete logs, so GPU results at sizes
//!   too large for a CPU reference can still be checked.
//! - [`split`]: the 0 / 1 / other classification of scalars shared by the A, B and L sums.
//! - [`conformance`]: the kit every MSM backend passes ([`conformance::check_msm`]), run
//!   against the CPU in CI and against the GPU on a GPU machine.
//!
//! ```
//! use blstrs::{G1Affine, G1Projective, Scalar};
//! use group::Group;
//! use group::prime::PrimeCurveAffine;
//!
//! let bases = vec![G1Affine::generator(); 3];
//! let scalars = vec![Scalar::from(1u64), Scalar::from(2u64), Scalar::from(3u64)];
//! let sum = kiln_msm::cpu::msm_g1(&bases, &scalars).unwrap();
//! assert_eq!(sum, G1Projective::generator() * Scalar::from(6u64));
//! ```

pub mod conformance;
pub mod cpu;
mod density;
pub mod dlog;
mod error;
#[cfg(feature = "cuda")]
pub mod gpu;
pub mod split;

pub use density::Density;
pub use error::MsmError;
