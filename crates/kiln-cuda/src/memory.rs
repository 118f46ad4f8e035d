//! Device and pinned host buffers, with the checks every GPU test needs.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, DevicePtrMut, DeviceRepr, PinnedHostSlice, ValidAsZeroBits};

use crate::CudaResultExt;
use crate::Device;
use crate::error::Result;

/// The byte every poisoned buffer is filled with. Chosen so that a 32-bit limb of
/// poison (0xA5A5A5A5) is larger than every modulus' top limb: a kernel output left
/// unwritten is never a valid field element.
pub const POISON_BYTE: u8 = 0xA5;

/// Allocates `len` values of `T` on `stream` and fills them with [`POISON_BYTE`], so a test
/// sees any element a kernel failed to write.
///
/// This is a stream-ordered allocation (`cuMemAllocAsync`): fine for tests and set-up,
/// never for the proving hot path, whose memory `kiln-vram` reserves up front.
pub fn alloc_poisoned<T: DeviceRepr>(stream: &Arc<CudaStream>, len: usize) -> Result<CudaSlice<T>> {
    // SAFETY: the memory is uninitialised for a moment; it is fully written by the memset
    // below, on the same stream, before anything can read it.
    let mut buf = unsafe { stream.alloc::<T>(len) }.ctx("cuMemAllocAsync")?;
    poison(stream, &mut buf)?;
    Ok(buf)
}

/// Fills `buf` with [`POISON_BYTE`] on `stream`.
pub fn poison<T, B: DevicePtrMut<T>>(stream: &Arc<CudaStream>, buf: &mut B) -> Result<()> {
    let bytes = buf.num_bytes();
    let (ptr, _record) = buf.device_ptr_mut(stream);
    // SAFETY: `ptr` is valid for `bytes` bytes on `stream` (held by `_record` until queued).
    unsafe { cudarc::driver::result::memset_d8_async(ptr, POISON_BYTE, bytes, stream.cu_stream()) }
        .ctx("cuMemsetD8Async")
}

/// Page-locked host memory of `len` values (`len > 0`: zero is an error), for fast and
/// asynchronous copies.
///
/// `write_combined` suits buffers the host only writes (uploads); use `false` for
/// buffers the host reads back (downloads), which write-combining makes very slow.
pub fn alloc_pinned<T: DeviceRepr + ValidAsZeroBits>(
    device: &Device,
    len: usize,
    write_combined: bool,
) -> Result<PinnedHostSlice<T>> {
    if len == 0 {
        // The driver cannot page-lock zero bytes (and cudarc asserts on the null pointer).
        let invalid = cudarc::driver::DriverError(cudarc::driver::sys::cudaError_enum::CUDA_ERROR_INVALID_VALUE);
        return Err(crate::CudaError::driver("cuMemHostAlloc of zero elements", invalid));
    }
    let flags = if write_combined { cudarc::driver::sys::CU_MEMHOSTALLOC_WRITECOMBINED } else { 0 };
    // SAFETY: the memory is zeroed right below, before it is handed out; all-zero bits
    // are a valid `T` (`ValidAsZeroBits`).
    let mut host = unsafe { device.ctx().alloc_pinned_with_flags::<T>(len, flags) }.ctx("cuMemHostAlloc")?;
    let ptr = host.as_mut_ptr().ctx("cuEventSynchronize")?;
    // SAFETY: `ptr` points to `len` values of `T` that this function owns exclusively.
    unsafe { std::ptr::write_bytes(ptr, 0, len) };
    Ok(host)
}

/// Times work on a stream with a pair of events.
pub struct StreamTimer {
    start: cudarc::driver::CudaEvent,
    stream: Arc<CudaStream>,
}

impl StreamTimer {
    /// Records the start event on `stream`.
    pub fn start(stream: &Arc<CudaStream>) -> Result<Self> {
        let start = stream
            .context()
            .new_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT))
            .ctx("cuEventCreate")?;
        start.record(stream).ctx("cuEventRecord")?;
        Ok(StreamTimer { start, stream: stream.clone() })
    }

    /// Records the end event, waits for it, and returns the milliseconds in between.
    pub fn stop_ms(self) -> Result<f32> {
        let end = self
            .stream
            .context()
            .new_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT))
            .ctx("cuEventCreate")?;
        end.record(&self.stream).ctx("cuEventRecord")?;
        end.synchronize().ctx("cuEventSynchronize")?;
        self.start.elapsed_ms(&end).ctx("cuEventElapsedTime")
    }
}
