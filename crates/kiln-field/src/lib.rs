//! BLS12-381 field and curve types (blstrs), their device layout and GPU arithmetic.
//!
//! - **Host types are blstrs'** ([`Scalar`], [`Fp`], [`Fp2`], [`G1Affine`], [`G2Affine`],
//!   [`G1Projective`], [`G2Projective`]), re-exported here. blst keeps Montgomery limbs,
//!   little-endian, and the kernels (`kernels/field`, `kernels/curve`) use the very same
//!   bytes, so slices go to the device without conversion: see [`DeviceLayout`].
//! - **Domain constants** (moduli, R, R², the 2-adic root of unity, the coset generator) live
//!   in one header, `constants.cuh`, included by the kernels (kiln-kernels' copy) and parsed
//!   by [`constants`] (this crate's byte-equal copy); tests check every one against blstrs/ff.
//! - **GPU test entry points**: [`gpu`] runs every field and curve operation as a batch
//!   kernel, so tests can compare the device with blstrs.
//!
//! ```
//! use kiln_field::{DeviceLayout, Scalar};
//! use ff::Field;
//!
//! let xs = vec![Scalar::ONE, Scalar::from(7u64)];
//! let words: &[u64] = Scalar::as_u64s(&xs); // what goes to the device, no copy
//! assert_eq!(words.len(), 8);
//! assert_eq!(Scalar::from_u64s(words).unwrap(), xs);
//! // The device sees the same Montgomery limbs as the `FR_ONE` constant of the kernels.
//! assert_eq!(words[..4], kiln_field::constants::limbs_u64("FR_ONE").unwrap()[..]);
//! ```

pub mod constants;
#[cfg(feature = "cuda")]
pub mod gpu;
mod layout;

pub use blstrs::{Fp, Fp2, G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
pub use layout::{DeviceLayout, LayoutError};

/// The README's examples, run as doctests; they name the GPU API too, so only with the
/// `cuda` feature.
#[doc = include_str!("../README.md")]
#[cfg(all(doctest, feature = "cuda"))]
pub struct ReadmeDoctests;
