//! The GPU backend of the kit: [`GpuDomain`]s over data uploaded into poisoned device memory.

use std::collections::HashMap;
use std::sync::Arc;

use blstrs::Scalar;
use cudarc::driver::{CudaStream, PinnedHostSlice};
use kiln_cuda::{CudaResultExt, Device, DeviceBuf, DeviceMemory, PoolMemory, alloc_pinned, check_stream};
use kiln_field::DeviceLayout;

use super::{NttBackend, Transform};
use crate::gpu::{GpuDomain, HostInput};
use crate::{Domain, NttError};

/// The GPU NTT as an [`NttBackend`], for tests: one [`GpuDomain`] per size (built on first
/// use, memory from cudarc's pool), data uploaded into freshly poisoned device buffers and
/// read back after the stream is checked. The H step of full-length inputs runs
/// [`GpuDomain::h_step`] on device data; shorter inputs go through
/// [`GpuDomain::h_step_from_host`] from pinned buffers on a second stream, so the device's
/// zero padding is checked too (the padding starts as poison).
pub struct GpuNtt {
    device: Arc<Device>,
    stream: Arc<CudaStream>,
    copy_stream: Arc<CudaStream>,
    domains: HashMap<u32, GpuDomain>,
}

impl std::fmt::Debug for GpuNtt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuNtt").field("device", &self.device.ordinal()).finish_non_exhaustive()
    }
}

impl GpuNtt {
    /// A backend on `device`, with a compute stream and a copy stream of its own.
    pub fn new(device: &Arc<Device>) -> Result<Self, NttError> {
        Ok(GpuNtt {
            device: device.clone(),
            stream: device.new_stream()?,
            copy_stream: device.new_stream()?,
            domains: HashMap::new(),
        })
    }

    fn domain(&mut self, d: &Domain) -> Result<&GpuDomain, NttError> {
        if !self.domains.contains_key(&d.log_size()) {
            let gd = GpuDomain::new(&self.device, &self.stream, d, &PoolMemory)?;
            self.domains.insert(d.log_size(), gd);
        }
        Ok(&self.domains[&d.log_size()])
    }

    /// `len` poisoned scalars on the device with `values` copied over the first ones.
    fn upload(&self, values: &[Scalar], len: usize) -> Result<DeviceBuf<u64>, NttError> {
        let mut buf = PoolMemory.take_poisoned::<u64>(&self.stream, 4 * len, "kit ntt data")?;
        if !values.is_empty() {
            self.stream
                .memcpy_htod(Scalar::as_u64s(values), &mut buf.slice_mut(..4 * values.len()))
                .ctx("cuMemcpyHtoDAsync(kit ntt data)")?;
        }
        Ok(buf)
    }

    fn download(&self, buf: &DeviceBuf<u64>) -> Result<Vec<Scalar>, NttError> {
        let words = self.stream.clone_dtoh(&**buf).ctx("cuMemcpyDtoH(kit ntt data)")?;
        check_stream(&self.stream)?;
        Ok(Scalar::from_u64s(&words)?)
    }

    fn pinned(&self, values: &[Scalar]) -> Result<PinnedHostSlice<u64>, NttError> {
        let mut p = alloc_pinned::<u64>(&self.device, 4 * values.len(), true)?;
        p.as_mut_slice().ctx("pinned as_mut_slice")?.copy_from_slice(Scalar::as_u64s(values));
        Ok(p)
    }
}

impl NttBackend for GpuNtt {
    fn name(&self) -> String {
        format!("GPU NTT (device {})", self.device.ordinal())
    }

    fn transform(&mut self, domain: &Domain, t: Transform, values: &mut [Scalar]) -> Result<(), NttError> {
        self.domain(domain)?;
        let mut buf = self.upload(values, values.len())?;
        let (gd, stream) = (&self.domains[&domain.log_size()], &self.stream);
        match t {
            Transform::Forward => gd.forward(stream, &mut buf)?,
            Transform::Inverse => gd.inverse(stream, &mut buf)?,
            Transform::CosetForward => gd.coset_forward(stream, &mut buf)?,
            Transform::CosetInverse => gd.coset_inverse(stream, &mut buf)?,
        }
        values.copy_from_slice(&self.download(&buf)?);
        Ok(())
    }

    fn h_step(&mut self, domain: &Domain, a: &[Scalar], b: &[Scalar], c: &[Scalar]) -> Result<Vec<Scalar>, NttError> {
        self.domain(domain)?;
        let n = domain.size();
        let full = [a, b, c].iter().all(|v| v.len() == n);
        let [mut da, mut db, mut dc] = if full {
            [self.upload(a, n)?, self.upload(b, n)?, self.upload(c, n)?]
        } else {
            [self.upload(&[], n)?, self.upload(&[], n)?, self.upload(&[], n)?]
        };
        let gd = &self.domains[&domain.log_size()];
        if full {
            gd.h_step(&self.stream, &mut da, &mut db, &mut dc)?;
        } else {
            let (pa, pb, pc) = (self.pinned(a)?, self.pinned(b)?, self.pinned(c)?);
            gd.h_step_from_host(
                &self.stream,
                &self.copy_stream,
                [HostInput::Pinned(&pa), HostInput::Pinned(&pb), HostInput::Pinned(&pc)],
                [&mut da, &mut db, &mut dc],
            )?;
        }
        self.download(&da)
    }
}
