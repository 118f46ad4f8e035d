//! The one error type of the device runtime.

use cudarc::driver::DriverError;
use cudarc::driver::sys::CUresult;

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
    #[error("CUDA {op} failed: {status:?}{}", hint_for(*.status))]
    Driver {
        /// What kiln was doing.
        op: &'static str,
        /// The driver's status code, e.g. `CUresult::CUDA_ERROR_OUT_OF_MEMORY` (shown by that name).
        status: CUresult,
    },
    /// A launch or buffer was given arguments that do not fit (a caller bug).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
}

impl CudaError {
    /// Wraps a cudarc error with what kiln was doing.
    pub fn driver(op: &'static str, err: DriverError) -> Self {
        CudaError::Driver { op, status: err.0 }
    }

    /// The driver's status code, when a driver call failed.
    pub fn status(&self) -> Option<CUresult> {
        match self {
            CudaError::Driver { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// Whether this is the device running out of memory.
    pub fn is_out_of_memory(&self) -> bool {
        self.status() == Some(CUresult::CUDA_ERROR_OUT_OF_MEMORY)
    }

    /// Whether the error is sticky: a kernel faulted (illegal address, trap, hardware error)
    /// and the CUDA context is unusable until the process ends. Every later call on that
    /// device fails too, so its work must go elsewhere; other devices are unaffected.
    pub fn is_sticky(&self) -> bool {
        use CUresult::*;
        matches!(
            self.status(),
            Some(
                CUDA_ERROR_ILLEGAL_ADDRESS
                    | CUDA_ERROR_LAUNCH_FAILED
                    | CUDA_ERROR_ILLEGAL_INSTRUCTION
                    | CUDA_ERROR_MISALIGNED_ADDRESS
                    | CUDA_ERROR_INVALID_ADDRESS_SPACE
                    | CUDA_ERROR_INVALID_PC
                    | CUDA_ERROR_HARDWARE_STACK_ERROR
                    | CUDA_ERROR_ASSERT
                    | CUDA_ERROR_ECC_UNCORRECTABLE
                    | CUDA_ERROR_LAUNCH_TIMEOUT
                    | CUDA_ERROR_CONTEXT_IS_DESTROYED
            )
        )
    }
}

/// What to do about a failed driver call, by its status code.
fn hint_for(status: CUresult) -> &'static str {
    use CUresult::*;
    match status {
        CUDA_ERROR_OUT_OF_MEMORY => {
            " (the device is out of memory: run fewer workers or let the VRAM plan pick the streamed path)"
        }
        CUDA_ERROR_NO_BINARY_FOR_GPU | CUDA_ERROR_INVALID_IMAGE | CUDA_ERROR_INVALID_PTX => {
            " (the embedded kernels do not fit this GPU: rebuild with KILN_CUDA_ARCHS listing its architecture)"
        }
        // The sticky errors: after one, every call on the context fails.
        CUDA_ERROR_ILLEGAL_ADDRESS
        | CUDA_ERROR_MISALIGNED_ADDRESS
        | CUDA_ERROR_ILLEGAL_INSTRUCTION
        | CUDA_ERROR_INVALID_PC
        | CUDA_ERROR_HARDWARE_STACK_ERROR
        | CUDA_ERROR_LAUNCH_FAILED
        | CUDA_ERROR_ASSERT => {
            " (a kernel faulted; the context is unusable: restart the process and report this as a kiln bug)"
        }
        CUDA_ERROR_NOT_INITIALIZED
        | CUDA_ERROR_NO_DEVICE
        | CUDA_ERROR_STUB_LIBRARY
        | CUDA_ERROR_SYSTEM_DRIVER_MISMATCH
        | CUDA_ERROR_UNSUPPORTED_PTX_VERSION => {
            " (the driver is missing or too old for CUDA 13.0: update the NVIDIA driver)"
        }
        _ => "",
    }
}

/// Result alias of the device runtime.
pub type Result<T, E = CudaError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(status: CUresult) -> CudaError {
        CudaError::driver("cuMemAlloc", DriverError(status))
    }

    #[test]
    fn the_status_is_kept_as_a_value() {
        let oom = failed(CUresult::CUDA_ERROR_OUT_OF_MEMORY);
        assert_eq!(oom.status(), Some(CUresult::CUDA_ERROR_OUT_OF_MEMORY));
        assert!(oom.is_out_of_memory());
        assert!(!failed(CUresult::CUDA_ERROR_INVALID_VALUE).is_out_of_memory());
        assert_eq!(CudaError::NoDriver.status(), None);
        assert!(!CudaError::NoDriver.is_out_of_memory());
    }

    #[test]
    fn messages_name_the_status_and_what_to_do() {
        assert_eq!(
            failed(CUresult::CUDA_ERROR_OUT_OF_MEMORY).to_string(),
            "CUDA cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (the device is out of memory: run fewer workers or \
             let the VRAM plan pick the streamed path)"
        );
        assert!(failed(CUresult::CUDA_ERROR_NO_BINARY_FOR_GPU).to_string().contains("KILN_CUDA_ARCHS"));
        assert!(failed(CUresult::CUDA_ERROR_ILLEGAL_ADDRESS).to_string().contains("restart the process"));
        assert!(failed(CUresult::CUDA_ERROR_NOT_INITIALIZED).to_string().contains("update the NVIDIA driver"));
        // Names that merely contain a hinted one get no hint (string matching gave this one the driver's).
        assert_eq!(
            failed(CUresult::CUDA_ERROR_PROFILER_NOT_INITIALIZED).to_string(),
            "CUDA cuMemAlloc failed: CUDA_ERROR_PROFILER_NOT_INITIALIZED"
        );
    }
}
