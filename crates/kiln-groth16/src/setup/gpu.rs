//! The GPU setup: kiln-msm's [`FixedBase`] products and kiln-ntt's GPU inverse FFT, with the
//! QAP from a recorded [`Shape`]. Device memory comes from cudarc's pool ([`PoolMemory`]): a
//! setup is a tool run before any prover starts, not the proving path.

use std::sync::Arc;

use blstrs::{G1Affine, G2Affine, Scalar};
use kiln_cuda::{CudaResultExt, Device, DeviceMemory, PoolMemory, check_stream};
use kiln_field::DeviceLayout;
use kiln_msm::gpu::FixedBase;
use kiln_ntt::Domain;
use kiln_ntt::gpu::GpuDomain;

use super::qap::Qap;
use super::{Engine, Trapdoor, build};
use crate::error::Groth16Error;
use crate::params::Parameters;
use crate::progress::Progress;
use crate::recorded::Shape;

/// Scalars per device chunk of the fixed-base products (G1: ~1.3 GiB of device memory,
/// G2: ~2.5 GiB): large enough to fill the GPU, small enough for any CUDA card kiln runs on.
pub const CHUNK: usize = 1 << 22;

/// The GPU engine: one fixed base per group, on `device`.
struct GpuEngine {
    device: Arc<Device>,
    g1: FixedBase,
    g2: FixedBase,
}

impl GpuEngine {
    fn new(device: &Arc<Device>, t: &Trapdoor) -> Result<Self, Groth16Error> {
        Ok(GpuEngine {
            device: device.clone(),
            g1: FixedBase::g1(device, t.g1, CHUNK, &PoolMemory)?,
            g2: FixedBase::g2(device, t.g2, CHUNK, &PoolMemory)?,
        })
    }
}

impl Engine for GpuEngine {
    fn g1(&mut self, scalars: &[Scalar], out: &mut [G1Affine], progress: &dyn Progress) -> Result<(), Groth16Error> {
        for (s, o) in scalars.chunks(CHUNK).zip(out.chunks_mut(CHUNK)) {
            self.g1.mul_g1(s, o)?;
            progress.inc(s.len() as u64);
        }
        Ok(())
    }

    fn g2(&mut self, scalars: &[Scalar], out: &mut [G2Affine], progress: &dyn Progress) -> Result<(), Groth16Error> {
        for (s, o) in scalars.chunks(CHUNK).zip(out.chunks_mut(CHUNK)) {
            self.g2.mul_g2(s, o)?;
            progress.inc(s.len() as u64);
        }
        Ok(())
    }

    fn ifft(&mut self, domain: &Domain, values: &mut [Scalar]) -> Result<(), Groth16Error> {
        let stream = self.device.new_stream()?;
        let gpu_domain = GpuDomain::new(&self.device, &stream, domain, &PoolMemory)?;
        let mut buf = PoolMemory.take::<u64>(&stream, values.len() * Scalar::WORDS, "setup ifft")?;
        stream.memcpy_htod(Scalar::as_u64s(values), &mut *buf).ctx("cuMemcpyHtoDAsync(setup ifft)")?;
        gpu_domain.inverse(&stream, &mut buf)?;
        stream.memcpy_dtoh(&*buf, Scalar::as_u64s_mut(values)).ctx("cuMemcpyDtoHAsync(setup ifft)")?;
        check_stream(&stream)?;
        Ok(())
    }
}

/// Parameters for the circuit recorded in `shape`, from the trapdoor `t`, on `device`: the
/// same bytes as [`super::setup_with_trapdoor`] gives on the CPU for the same circuit and
/// trapdoor.
pub fn gpu_setup(
    shape: &Shape,
    t: &Trapdoor,
    device: &Arc<Device>,
    progress: &dyn Progress,
) -> Result<Parameters, Groth16Error> {
    let domain = Domain::for_size(shape.num_constraints())?;
    let mut engine = GpuEngine::new(device, t)?;
    build(&domain, t, &mut engine, progress, |lagrange| Ok(Qap::from_shape(shape, lagrange)))
}
