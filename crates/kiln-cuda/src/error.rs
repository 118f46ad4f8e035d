//! The one error type of the device runtime.

use cudarc::driver::DriverError;

/// Everything that can go wrong talking to a CUDA device. Each variant says what to do.
#[derive(Debug, thiserror::Error)]
pub enum CudaError {
    /// libcuda could not be loaded: no NVIDIA driver on this machine.
    #[error("no CUDA driver: libcuda could not be loaded (install the NVIDIA driver, or use the CPU path)")]
    NoDriver,
    /// The driver loaded but reports no device (or not the one asked for).
    #[error("no CUDA device{}: the driver is present but lists {count} device(s)", .ordinal.map(|o| format!(" {o}")).unwrap_or_default())]
    NoDevice {
        /// The ordinal that was asked for, if any.
        ordinal: Option<usize>,
        /// How many devices the driver reports.
        count: usize,
    },
    /// This build has no kernels (nvcc was missing when it was compiled).
    #[error("{}", kiln_kernels::NOT_BUILT_HINT)]
    KernelsNotBuilt,
    /// The kernels were built, but not for this device's architecture.
    #[error(
        "kernels were built for sm_{built:?} (+PTX of the newest) but this device is sm_{major}{minor}: rebuild with KILN_CUDA_ARCHS including {major}{minor}"
    )]
    ArchNotBuilt {
        /// Device compute capability, major.
        major: u32,
        /// Device compute capability, minor.
        minor: u32,
        /// Architectures the build holds.
        built: &'static [u32],
    },
    /// No embedded module or function by that name (a bug in kiln: the name is wrong).
    #[error("no kernel {module}::{function} in this build")]
    MissingKernel {
        /// Module name (`<layer>_<file>`).
        module: String,
        /// Function name (may be empty when the module itself is missing).
        function: String,
    },
    /// A CUDA driver call failed.
    #[error("CUDA {op} failed: {status}{}", hint_for(.status))]
    Driver {
        /// What kiln was doing.
        op: &'static str,
        /// The driver's status name, e.g. `CUDA_ERROR_OUT_OF_MEMORY`.
        status: String,
    },
    /// A launch or buffer was given arguments that do not fit (a caller bug).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
}

impl CudaError {
    /// Wraps a cudarc error with what kiln was doing.
    pub fn driver(op: &'static str, err: DriverError) -> Self {
        CudaError::Driver { op, status: format!("{:?}", err.0) }
    }

    /// Whether this is the device running out of memory.
    pub fn is_out_of_memory(&self) -> bool {
        matches!(self, CudaError::Driver { status, .. } if status.contains("OUT_OF_MEMORY"))
    }
}

fn hint_for(status: &str) -> &'static str {
    if status.contains("OUT_OF_MEMORY") {
        " (the device is out of memory: run fewer workers or let the VRAM plan pick the streamed path)"
    } else if status.contains("NO_BINARY_FOR_GPU") || status.contains("INVALID_IMAGE") || status.contains("INVALID_PTX")
    {
        " (the embedded kernels do not fit this GPU: rebuild with KILN_CUDA_ARCHS listing its architecture)"
    } else if status.contains("ILLEGAL_ADDRESS") || status.contains("LAUNCH_FAILED") || status.contains("ASSERT") {
        " (a kernel faulted; the context is unusable: restart the process and report this as a kiln bug)"
    } else if status.contains("NOT_INITIALIZED")
        || status.contains("NO_DEVICE")
        || status.contains("INSUFFICIENT_DRIVER")
    {
        " (the driver is missing or too old for CUDA 13.0: update the NVIDIA driver)"
    } else {
        ""
    }
}

/// Result alias of the device runtime.
pub type Result<T, E = CudaError> = std::result::Result<T, E>;
