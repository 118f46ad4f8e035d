//! GPU Pippenger MSM in G1 and G2 (kernels in `kernels/msm/`: sort.cu, g1.cu, g2.cu).
//!
//! - [`GpuBases`]: a base set uploaded once and resident on the device (the SRS lives there).
//! - [`MsmContext`]: the plan for one curve and a maximum size; it allocates all its scratch
//!   ([`scratch_bytes`]) once at creation, from the [`kiln_cuda::DeviceMemory`] it is given, and never
//!   allocates in [`MsmContext::msm_g1`] and friends. Scalars come from the host or are
//!   already on the device ([`Scalars`]).
//! - Several MSMs per call: [`MsmContext::msm_g1_batch`] (several scalar vectors, one base
//!   set) and [`MsmContext::msm_g1_multi`] (one scalar vector over several base sets: the
//!   digits are sorted once and shared).
//! - The 0/1/other split on the device: [`MsmContext::split`] then [`MsmContext::msm_g1_split`].
//! - [`FixedBase`]: `k_i · G` for one fixed point and many scalars (the setup's products).
//!
//! Correctness: every entry point is compared with [`crate::cpu`] by the GPU tests.
//!
//! Files: [`plan`] (window sizes, scratch sizes), `bases` (base sets and scalar sources),
//! `context` (the engine: sort, accumulate, reduce), `context/split.rs` (the 0/1/other path),
//! [`fixed_base`] (the setup's fixed-base products).

mod bases;
mod context;
pub mod fixed_base;
pub mod plan;

pub use bases::{GpuBases, Scalars};
pub use context::{GpuSplit, MsmContext};
pub use fixed_base::FixedBase;
pub use plan::{Plan, scratch_bytes, window_bits};

use kiln_field::{DeviceLayout, Fp, Fp2, G1Affine, G1Projective, G2Affine, G2Projective};

/// Which group an MSM runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Curve {
    /// G1 (over Fp): 96-byte affine bases.
    G1,
    /// G2 (over Fp2): 192-byte affine bases.
    G2,
}

/// Sizes come from kiln-field's [`DeviceLayout`]: the host types' bytes are the kernels'.
impl Curve {
    /// Bytes of one coordinate: Fp (G1) or Fp2 (G2).
    pub(crate) const fn field_bytes(self) -> usize {
        8 * match self {
            Curve::G1 => Fp::WORDS,
            Curve::G2 => Fp2::WORDS,
        }
    }
    /// Bytes of one affine base (`G1Affine` / `G2Affine`).
    pub const fn affine_bytes(self) -> usize {
        8 * match self {
            Curve::G1 => G1Affine::WORDS,
            Curve::G2 => G2Affine::WORDS,
        }
    }
    /// Bytes of one XYZZ point (the buckets' form; no host type has it).
    pub(crate) const fn xyzz_bytes(self) -> usize {
        4 * self.field_bytes()
    }
    /// Bytes of one Jacobian point (`G1Projective` / `G2Projective`: an MSM's result).
    pub(crate) const fn jacobian_bytes(self) -> usize {
        8 * match self {
            Curve::G1 => G1Projective::WORDS,
            Curve::G2 => G2Projective::WORDS,
        }
    }
}
