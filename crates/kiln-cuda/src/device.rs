//! Device discovery and the per-device handle that owns loaded modules.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::sys::{CUdevice_attribute, CUresult};
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaStream};
use cudarc::nvrtc::Ptx;

use crate::CudaResultExt;
use crate::error::{CudaError, Result};

/// Whether libcuda can be loaded. cudarc panics on its first call without it, so every
/// entry point asks this first. Cached: the answer does not change during a process.
pub fn driver_present() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    // SAFETY: `is_culib_present` only tries to dlopen the library names and drops them.
    *PRESENT.get_or_init(|| unsafe { cudarc::driver::sys::is_culib_present() })
}

/// How many CUDA devices the driver lists. `Err(NoDriver)` without a driver; never panics.
pub fn device_count() -> Result<usize> {
    if !driver_present() {
        return Err(CudaError::NoDriver);
    }
    // A driver that loads but cannot initialise (no device node, too old) counts as no device.
    match CudaContext::device_count() {
        Ok(n) => Ok(n.max(0) as usize),
        Err(e) if e.0 == CUresult::CUDA_ERROR_NO_DEVICE => Ok(0),
        Err(e) => Err(CudaError::driver("cuInit/cuDeviceGetCount", e)),
    }
}

/// What kiln knows about one device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceInfo {
    /// The CUDA ordinal.
    pub ordinal: usize,
    /// Marketing name, e.g. `NVIDIA H200`.
    pub name: String,
    /// Compute capability, major.
    pub major: u32,
    /// Compute capability, minor.
    pub minor: u32,
    /// Streaming multiprocessors.
    pub sm_count: u32,
    /// Free device memory at the time of the query, bytes.
    pub free_bytes: usize,
    /// Total device memory, bytes.
    pub total_bytes: usize,
    /// Whether this build's kernels run on it (SASS for its arch or PTX it can JIT).
    pub kernels_supported: bool,
}

/// Every device with its properties. `Err(NoDriver)` / `Err(NoDevice)` when there is none:
/// values, never a panic.
pub fn devices() -> Result<Vec<DeviceInfo>> {
    let count = device_count()?;
    if count == 0 {
        return Err(CudaError::NoDevice { ordinal: None, count: 0 });
    }
    (0..count).map(|i| Device::open(i).and_then(|d| d.info())).collect()
}

/// An open device: its primary context and the kiln modules loaded into it (once each).
///
/// Opened through [`Device::open`], which hands out one shared handle per ordinal so
/// that modules are loaded once per device per process.
pub struct Device {
    ordinal: usize,
    ctx: Arc<CudaContext>,
    modules: Mutex<HashMap<&'static str, Arc<CudaModule>>>,
}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Device").field("ordinal", &self.ordinal).finish_non_exhaustive()
    }
}

impl Device {
    /// Opens device `ordinal` (shared handle, created on first use).
    pub fn open(ordinal: usize) -> Result<Arc<Device>> {
        static OPEN: OnceLock<Mutex<HashMap<usize, Arc<Device>>>> = OnceLock::new();
        let count = device_count()?;
        if ordinal >= count {
            return Err(CudaError::NoDevice { ordinal: Some(ordinal), count });
        }
        let mut open = OPEN.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
        if let Some(d) = open.get(&ordinal) {
            return Ok(d.clone());
        }
        let ctx = CudaContext::new(ordinal).ctx("cuDevicePrimaryCtxRetain")?;
        let device = Arc::new(Device { ordinal, ctx, modules: Mutex::new(HashMap::new()) });
        open.insert(ordinal, device.clone());
        Ok(device)
    }

    /// The CUDA ordinal.
    pub fn ordinal(&self) -> usize {
        self.ordinal
    }

    /// The cudarc context, for allocations and launches.
    pub fn ctx(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// Compute capability `(major, minor)`.
    pub fn compute_capability(&self) -> Result<(u32, u32)> {
        let (ma, mi) = self.ctx.compute_capability().ctx("cuDeviceGetAttribute(compute capability)")?;
        Ok((ma as u32, mi as u32))
    }

    /// `(free, total)` device memory in bytes, now.
    pub fn mem_info(&self) -> Result<(usize, usize)> {
        self.ctx.mem_get_info().ctx("cuMemGetInfo")
    }

    /// Name, capability, SMs, memory and kernel support.
    pub fn info(&self) -> Result<DeviceInfo> {
        let (major, minor) = self.compute_capability()?;
        let sm_count = self
            .ctx
            .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .ctx("cuDeviceGetAttribute(SM count)")? as u32;
        let (free_bytes, total_bytes) = self.mem_info()?;
        Ok(DeviceInfo {
            ordinal: self.ordinal,
            name: self.ctx.name().ctx("cuDeviceGetName")?,
            major,
            minor,
            sm_count,
            free_bytes,
            total_bytes,
            kernels_supported: kiln_kernels::supports(major, minor),
        })
    }

    /// Streaming multiprocessors on this device.
    pub fn sm_count(&self) -> Result<u32> {
        Ok(self
            .ctx
            .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .ctx("cuDeviceGetAttribute(SM count)")? as u32)
    }

    /// The embedded module `module` (a [`kiln_kernels::Module::name`]), loaded into this device once.
    pub fn module(&self, module: &str) -> Result<Arc<CudaModule>> {
        let mut modules = self.modules.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(m) = modules.get(module) {
            return Ok(m.clone());
        }
        if !kiln_kernels::BUILT {
            return Err(CudaError::KernelsNotBuilt);
        }
        let (major, minor) = self.compute_capability()?;
        if !kiln_kernels::supports(major, minor) {
            return Err(CudaError::ArchNotBuilt { major, minor, built: kiln_kernels::ARCHS });
        }
        let embedded = kiln_kernels::module(module)
            .ok_or_else(|| CudaError::MissingKernel { module: module.into(), function: String::new() })?;
        let loaded = self.ctx.load_module(Ptx::from_binary(embedded.fatbin.to_vec())).ctx("cuModuleLoadData")?;
        modules.insert(embedded.name, loaded.clone());
        Ok(loaded)
    }

    /// The kernel a generated handle names (`kiln_kernels::msm::g1::ACCUMULATE`), loaded.
    pub fn kernel(&self, kernel: kiln_kernels::Kernel) -> Result<CudaFunction> {
        self.function(kernel.module, kernel.name)
    }

    /// Kernel `function` of embedded module `module` (prefer [`Device::kernel`] and the
    /// generated handles: a misspelt name then does not compile).
    pub fn function(&self, module: &str, function: &str) -> Result<CudaFunction> {
        self.module(module)?.load_function(function).map_err(|e| {
            if e.0 == CUresult::CUDA_ERROR_NOT_FOUND {
                CudaError::MissingKernel { module: module.into(), function: function.into() }
            } else {
                CudaError::driver("cuModuleGetFunction", e)
            }
        })
    }

    /// A new non-blocking stream on this device.
    pub fn new_stream(&self) -> Result<Arc<CudaStream>> {
        self.ctx.new_stream().ctx("cuStreamCreate")
    }

    /// Waits for all work on the device. **Device-global**: it waits for every stream of
    /// every worker. Only the lock policy's exclusive section may call this on a shared
    /// device (ARCHITECTURE.md §1).
    pub fn synchronize_device_global(&self) -> Result<()> {
        self.ctx.synchronize().ctx("cuCtxSynchronize")
    }
}
