//! The one currency for device memory: [`DeviceBuf`], handed out by a [`DeviceMemory`].
//!
//! The device layers (kiln-ntt's domain, kiln-msm's contexts and bases, the prover's
//! per-worker vectors) take memory, they do not allocate it. Who gives it decides where it
//! comes from: on the proving path, kiln-vram's arenas (one `cuMemAlloc` each, made once at
//! start-up under exclusive access, sub-allocated by offset with no driver call); in tests and
//! tools, [`PoolMemory`] (cudarc's stream-ordered pool, `cuMemAllocAsync`).

use std::any::Any;
use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, DeviceRepr, sys};

use crate::CudaResultExt;
use crate::error::Result;

/// `len` values of `T` in device memory, usable wherever cudarc takes a [`CudaSlice`]
/// (it dereferences to one). Owned memory is freed on drop; borrowed memory (a range of an
/// arena) is only given back to its owner, never to the driver.
pub struct DeviceBuf<T> {
    slice: ManuallyDrop<CudaSlice<T>>,
    /// What keeps the memory alive when it is borrowed (e.g. a kiln-vram reservation);
    /// `None` when `slice` owns its allocation.
    backing: Option<Box<dyn Any + Send + Sync>>,
}

impl<T> std::fmt::Debug for DeviceBuf<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceBuf").field("len", &self.slice.len()).field("borrowed", &self.backing.is_some()).finish()
    }
}

impl<T: DeviceRepr> DeviceBuf<T> {
    /// A buffer that owns `slice` (freed, stream-ordered, on drop).
    pub fn owned(slice: CudaSlice<T>) -> Self {
        DeviceBuf { slice: ManuallyDrop::new(slice), backing: None }
    }

    /// A buffer over `len` values at `ptr`, memory that `backing` keeps alive and owns.
    ///
    /// # Safety
    /// `ptr` must point to at least `len` values of `T` in device memory of `stream`'s
    /// context, valid for as long as `backing` lives and used by nothing else meanwhile.
    pub unsafe fn borrowed(
        stream: &Arc<CudaStream>,
        ptr: sys::CUdeviceptr,
        len: usize,
        backing: Box<dyn Any + Send + Sync>,
    ) -> Self {
        // SAFETY: the caller's contract; the slice is leaked (never freed) on drop.
        let slice = unsafe { stream.upgrade_device_ptr(ptr, len) };
        DeviceBuf { slice: ManuallyDrop::new(slice), backing: Some(backing) }
    }

    /// Whether the memory is borrowed from an owner (an arena) rather than owned.
    pub fn is_borrowed(&self) -> bool {
        self.backing.is_some()
    }
}

impl<T> Deref for DeviceBuf<T> {
    type Target = CudaSlice<T>;
    fn deref(&self) -> &CudaSlice<T> {
        &self.slice
    }
}

impl<T> DerefMut for DeviceBuf<T> {
    fn deref_mut(&mut self) -> &mut CudaSlice<T> {
        &mut self.slice
    }
}

impl<T> Drop for DeviceBuf<T> {
    fn drop(&mut self) {
        // SAFETY: `slice` is taken once, here, and not used afterwards.
        let slice = unsafe { ManuallyDrop::take(&mut self.slice) };
        if self.backing.is_some() {
            // Borrowed: `leak` orders the pending work of the slice on its stream and forgets the
            // pointer (no free); the range goes back to its owner when `backing` drops, after.
            let _ = slice.leak();
        } else {
            drop(slice);
        }
    }
}

/// Something that hands out device memory: [`PoolMemory`] or a kiln-vram arena.
pub trait DeviceMemory {
    /// `len` values of `T` for work on `stream` (one value when `len` is 0: the driver refuses
    /// empty allocations); `what` names the buffer in errors. The contents are unspecified:
    /// poison or write them before use.
    fn take<T: DeviceRepr>(&self, stream: &Arc<CudaStream>, len: usize, what: &'static str) -> Result<DeviceBuf<T>>;

    /// [`DeviceMemory::take`], then filled with [`crate::POISON_BYTE`] on `stream`, so that a
    /// test sees any value a kernel failed to write.
    fn take_poisoned<T: DeviceRepr>(
        &self,
        stream: &Arc<CudaStream>,
        len: usize,
        what: &'static str,
    ) -> Result<DeviceBuf<T>> {
        let mut buf = self.take(stream, len, what)?;
        crate::poison(stream, &mut *buf)?;
        Ok(buf)
    }
}

/// Memory from cudarc's stream-ordered pool (`cuMemAllocAsync` per buffer): for tests, tools
/// and set-up outside a VRAM plan. Never on the proving path (ARCHITECTURE.md §1).
#[derive(Debug, Clone, Copy, Default)]
pub struct PoolMemory;

impl DeviceMemory for PoolMemory {
    fn take<T: DeviceRepr>(&self, stream: &Arc<CudaStream>, len: usize, what: &'static str) -> Result<DeviceBuf<T>> {
        let _ = what;
        // SAFETY: uninitialised device memory; the trait's contract says callers write or
        // poison it before reading.
        let slice = unsafe { stream.alloc::<T>(len.max(1)) }.ctx("cuMemAllocAsync")?;
        Ok(DeviceBuf::owned(slice))
    }
}
