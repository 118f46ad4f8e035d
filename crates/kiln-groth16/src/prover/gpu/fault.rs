//! The launch-failure test hook ([`super::GpuOptions::fail_launch_on_input`]).

use std::sync::Arc;

use kiln_cuda::cudarc::driver::{CudaStream, LaunchConfig, PushKernelArg};
use kiln_cuda::{CudaResultExt, Device};

use crate::error::Groth16Error;

/// Launches the smoke kernel with 4096 threads per block, more than any CUDA device allows:
/// `cuLaunchKernel` refuses it (CUDA_ERROR_INVALID_VALUE) and nothing runs. A real driver
/// error on the proof's own stream, and not a sticky one: the context stays usable.
pub(super) fn refused_launch(device: &Device, stream: &Arc<CudaStream>) -> Groth16Error {
    let f = match device.kernel(kiln_kernels::smoke::MUL_ADD_U64) {
        Ok(f) => f,
        Err(e) => return e.into(),
    };
    let (null, n) = (0u64, 0u32);
    let mut b = stream.launch_builder(&f);
    b.arg(&null).arg(&null).arg(&null).arg(&null).arg(&n);
    let config = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (4096, 1, 1), shared_mem_bytes: 0 };
    // SAFETY: the driver validates the block size before running anything: with 4096 threads
    // per block the launch is refused, so the null pointers are never dereferenced (and the
    // kernel reads nothing for n = 0 anyway).
    match unsafe { b.launch(config) }.ctx("cuLaunchKernel(injected fault)") {
        Err(e) => e.into(),
        Ok(_) => Groth16Error::Cuda(kiln_cuda::CudaError::driver(
            "injected fault",
            kiln_cuda::cudarc::driver::DriverError(kiln_cuda::cudarc::driver::sys::CUresult::CUDA_ERROR_UNKNOWN),
        )),
    }
}
