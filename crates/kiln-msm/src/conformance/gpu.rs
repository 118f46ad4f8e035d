//! The GPU backend of the kit: [`MsmContext`]s of both groups over bases uploaded per call.

use std::sync::Arc;

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use kiln_cuda::{CudaResultExt, Device, DeviceMemory, PoolMemory};
use kiln_field::DeviceLayout;

use super::MsmBackend;
use crate::MsmError;
use crate::gpu::{Curve, GpuBases, MsmContext, Scalars};

/// The GPU MSM as an [`MsmBackend`], for tests: a G1 and a G2 [`MsmContext`] of one capacity,
/// bases uploaded into fresh poisoned memory from cudarc's pool on every call, and every
/// scratch buffer of the contexts poisoned before every call (a result or an intermediate
/// that a kernel fails to write shows up as garbage, never as an earlier call's value).
/// `multi` reads its scalars from device memory at an offset ([`Scalars::DeviceAt`]),
/// `plain` and `split` from the host.
pub struct GpuMsm {
    device: Arc<Device>,
    g1: MsmContext,
    g2: MsmContext,
}

impl std::fmt::Debug for GpuMsm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuMsm").field("capacity", &self.g1.capacity()).finish_non_exhaustive()
    }
}

impl GpuMsm {
    /// Contexts of `capacity` points in G1 and G2 on `device` (memory from the pool).
    pub fn new(device: &Arc<Device>, capacity: usize) -> Result<Self, MsmError> {
        Ok(GpuMsm {
            device: device.clone(),
            g1: MsmContext::new(device, Curve::G1, capacity, &PoolMemory)?,
            g2: MsmContext::new(device, Curve::G2, capacity, &PoolMemory)?,
        })
    }
}

/// `scalars` on the device after one poisoned scalar, for [`Scalars::DeviceAt`] at offset 1.
fn device_scalars(ctx: &MsmContext, scalars: &[Scalar]) -> Result<kiln_cuda::DeviceBuf<u64>, MsmError> {
    let stream = ctx.stream();
    let mut buf = PoolMemory.take_poisoned::<u64>(stream, 4 * (scalars.len() + 1), "kit scalars")?;
    if !scalars.is_empty() {
        stream.memcpy_htod(Scalar::as_u64s(scalars), &mut buf.slice_mut(4..)).ctx("cuMemcpyHtoDAsync(kit scalars)")?;
    }
    Ok(buf)
}

macro_rules! gpu_group {
    ($ctx:ident, $load:ident, $plain:ident, $multi:ident, $split:ident, $affine:ty, $point:ty) => {
        fn $plain(&mut self, bases: &[$affine], scalars: &[Scalar]) -> Result<$point, MsmError> {
            let set = GpuBases::$load(&self.device, bases, &PoolMemory)?;
            self.$ctx.poison_scratch()?;
            self.$ctx.$plain(&set, Scalars::Host(scalars))
        }

        fn $multi(&mut self, bases: &[&[$affine]], scalars: &[Scalar]) -> Result<Vec<$point>, MsmError> {
            let sets: Vec<GpuBases> =
                bases.iter().map(|b| GpuBases::$load(&self.device, b, &PoolMemory)).collect::<Result<_, _>>()?;
            let refs: Vec<&GpuBases> = sets.iter().collect();
            let words = device_scalars(&self.$ctx, scalars)?;
            self.$ctx.poison_scratch()?;
            self.$ctx.$multi(&refs, Scalars::DeviceAt(&words, 1, scalars.len()))
        }

        fn $split(&mut self, bases: &[&[$affine]], scalars: &[Scalar]) -> Result<Vec<$point>, MsmError> {
            let sets: Vec<GpuBases> =
                bases.iter().map(|b| GpuBases::$load(&self.device, b, &PoolMemory)).collect::<Result<_, _>>()?;
            self.$ctx.poison_scratch()?;
            let split = self.$ctx.split(Scalars::Host(scalars))?;
            sets.iter().map(|set| self.$ctx.$split(set, &split)).collect()
        }
    };
}

impl MsmBackend for GpuMsm {
    fn name(&self) -> String {
        format!("GPU MSM (device {})", self.device.ordinal())
    }
    gpu_group!(g1, g1, msm_g1, msm_g1_multi, msm_g1_split, G1Affine, G1Projective);
    gpu_group!(g2, g2, msm_g2, msm_g2_multi, msm_g2_split, G2Affine, G2Projective);
}
