//! kiln's CUDA device runtime, over cudarc.
//!
//! - discovery that never panics: [`devices`] returns [`CudaError::NoDriver`] or
//!   [`CudaError::NoDevice`] as values where there is no GPU;
//! - one shared [`Device`] per ordinal that loads kiln's embedded kernel modules once;
//! - streams, event timing ([`StreamTimer`]), poisoned device buffers and pinned host
//!   buffers;
//! - one currency for device memory: [`DeviceBuf`], handed out by a [`DeviceMemory`]
//!   (kiln-vram's arenas on the proving path, [`PoolMemory`] in tests and tools);
//! - one typed error, [`CudaError`], carrying the CUDA status code (`CUresult`) and what to do.
//!
//! ```no_run
//! match kiln_cuda::devices() {
//!     Ok(devices) => {
//!         for d in devices {
//!             println!("{}: {} sm_{}{} {} SMs", d.ordinal, d.name, d.major, d.minor, d.sm_count);
//!         }
//!     }
//!     Err(e) => println!("{e}"), // "no CUDA driver: ..." on a machine without a GPU
//! }
//! ```
//!
//! Launching a kernel: `kiln_cuda::smoke::mul_add_u64` is the smallest complete example.
//!
//! cudarc is re-exported for launches and buffers. Its safe allocations are
//! stream-ordered (`cuMemAllocAsync`), which is exactly the memory-pool behaviour
//! ARCHITECTURE.md §1 warns about: on the proving path, memory comes from `kiln-vram`'s
//! arenas instead, through [`DeviceMemory`].

mod buf;
mod device;
mod error;
pub mod host;
mod memory;
pub mod smoke;
pub mod testing;

pub use buf::{DeviceBuf, DeviceMemory, PoolMemory};
pub use cudarc;
pub use device::{Device, DeviceInfo, device_count, devices, driver_present};
pub use error::{CudaError, Result};
pub use memory::{POISON_BYTE, StreamTimer, alloc_pinned, alloc_poisoned, poison};

/// Adds `.ctx("what kiln was doing")` to cudarc results, turning them into [`CudaError`].
pub trait CudaResultExt<T> {
    /// Wraps the driver error with the operation's name.
    fn ctx(self, op: &'static str) -> Result<T>;
}

impl<T> CudaResultExt<T> for std::result::Result<T, cudarc::driver::DriverError> {
    fn ctx(self, op: &'static str) -> Result<T> {
        self.map_err(|e| CudaError::driver(op, e))
    }
}

/// Checks for an error raised by an earlier asynchronous launch on `stream` (waits for it).
pub fn check_stream(stream: &cudarc::driver::CudaStream) -> Result<()> {
    stream.synchronize().map_err(|e| CudaError::driver("kernel execution (cuStreamSynchronize)", e))
}
