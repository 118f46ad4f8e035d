//! Arenas: one device allocation each, made once under exclusive access, sub-allocated by
//! offset with RAII [`Reservation`]s that never touch the driver.

use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};

use kiln_cuda::cudarc::driver::{CudaStream, DeviceRepr, result, sys};
use kiln_cuda::{CudaError, CudaResultExt, Device, DeviceBuf, DeviceMemory};
use kiln_lock::{ExclusiveGuard, LockPolicy};

use crate::VramError;

/// Every reservation starts on this boundary (coalesced loads, and any `T` of kiln's).
pub const ALIGN: u64 = 256;

/// First-fit bookkeeping of free byte ranges, coalescing on release. Pure: no driver.
#[derive(Debug, Clone)]
pub(crate) struct Ranges {
    capacity: u64,
    /// offset → length of each free range; never two adjacent.
    free: BTreeMap<u64, u64>,
}

impl Ranges {
    pub(crate) fn new(capacity: u64) -> Self {
        let mut free = BTreeMap::new();
        if capacity > 0 {
            free.insert(0, capacity);
        }
        Ranges { capacity, free }
    }

    /// A range of `bytes` (rounded up to [`ALIGN`]) at an aligned offset, or `None`.
    pub(crate) fn reserve(&mut self, bytes: u64) -> Option<(u64, u64)> {
        let len = bytes.max(1).div_ceil(ALIGN) * ALIGN;
        // Free ranges start aligned and have aligned lengths (everything handed out is), so
        // the first range long enough fits.
        let (&off, &have) = self.free.iter().find(|&(_, &have)| have >= len)?;
        self.free.remove(&off);
        if have > len {
            self.free.insert(off + len, have - len);
        }
        Some((off, len))
    }

    pub(crate) fn release(&mut self, off: u64, len: u64) {
        debug_assert!(off + len <= self.capacity);
        let (mut start, mut end) = (off, off + len);
        if let Some((&p, &plen)) = self.free.range(..off).next_back()
            && p + plen == off
        {
            self.free.remove(&p);
            start = p;
        }
        if let Some(&nlen) = self.free.get(&end) {
            self.free.remove(&end);
            end += nlen;
        }
        self.free.insert(start, end - start);
    }

    pub(crate) fn largest_free(&self) -> u64 {
        self.free.values().copied().max().unwrap_or(0)
    }

    pub(crate) fn free_bytes(&self) -> u64 {
        self.free.values().sum()
    }
}

#[derive(Debug)]
struct ArenaInner {
    name: String,
    ptr: sys::CUdeviceptr,
    bytes: u64,
    ranges: Mutex<Ranges>,
}

impl ArenaInner {
    fn ranges(&self) -> std::sync::MutexGuard<'_, Ranges> {
        self.ranges.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// One device allocation (`cuMemAlloc`, outside the stream-ordered pool, so no trim or
/// release threshold ever touches it), sub-allocated by offset.
///
/// Made and released only with an [`ExclusiveGuard`]: both are device-global. An arena
/// dropped without [`Arena::release`] is leaked (with a message), never freed from a
/// drop, because a `cuMemFree` there could run beside a lane's work.
#[derive(Debug)]
pub struct Arena {
    inner: Arc<ArenaInner>,
    released: bool,
}

impl Arena {
    /// Allocates `bytes` on `device` in one `cuMemAlloc`.
    pub fn allocate<P: LockPolicy>(
        excl: &ExclusiveGuard<P>,
        device: &Device,
        name: impl Into<String>,
        bytes: u64,
    ) -> Result<Arena, VramError> {
        let name = name.into();
        let size = usize::try_from(bytes.max(1)).map_err(|_| VramError::TooLarge { bytes })?;
        let ptr = excl.alloc_sync(device, size).map_err(|source| VramError::Allocate {
            arena: name.clone(),
            bytes,
            source,
        })?;
        Ok(Arena {
            inner: Arc::new(ArenaInner { ptr, bytes, ranges: Mutex::new(Ranges::new(bytes)), name }),
            released: false,
        })
    }

    /// The arena's name (for messages).
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// Its size in bytes.
    pub fn bytes(&self) -> u64 {
        self.inner.bytes
    }

    /// Its base device address.
    pub fn device_ptr(&self) -> sys::CUdeviceptr {
        self.inner.ptr
    }

    /// Bytes not reserved now.
    pub fn free_bytes(&self) -> u64 {
        self.inner.ranges().free_bytes()
    }

    /// Reserves room for `len` values of `T`. No driver call; the range returns on drop.
    pub fn reserve<T: DeviceRepr>(&self, len: usize) -> Result<Reservation<T>, VramError> {
        let bytes = (len as u64).checked_mul(size_of::<T>() as u64).ok_or(VramError::TooLarge { bytes: u64::MAX })?;
        let mut ranges = self.inner.ranges();
        let (offset, span) = ranges.reserve(bytes).ok_or_else(|| VramError::ArenaFull {
            arena: self.inner.name.clone(),
            asked: bytes,
            largest_free: ranges.largest_free(),
            size: self.inner.bytes,
        })?;
        Ok(Reservation { arena: self.inner.clone(), offset, span, len, _t: PhantomData })
    }

    /// Frees the allocation (`cuMemFree`, device-global). Synchronizes the device first so
    /// no queued work still uses it. Refused while reservations are alive.
    pub fn release<P: LockPolicy>(mut self, excl: &ExclusiveGuard<P>, device: &Device) -> Result<(), VramError> {
        let live = Arc::strong_count(&self.inner) - 1;
        if live > 0 {
            return Err(VramError::StillReserved { arena: self.inner.name.clone(), live });
        }
        excl.synchronize(device).map_err(|source| VramError::Release { arena: self.inner.name.clone(), source })?;
        // SAFETY: `ptr` came from `alloc_sync` on this device, is freed only here (`released`
        // guards it), no reservation is alive and the device was just drained.
        unsafe { excl.free_sync(device, self.inner.ptr) }
            .map_err(|source| VramError::Release { arena: self.inner.name.clone(), source })?;
        self.released = true;
        Ok(())
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        if !self.released {
            eprintln!(
                "kiln-vram: arena {:?} ({} bytes) dropped without Arena::release under exclusive access: leaked until \
                 the process exits (freeing it here could run beside a lane's work)",
                self.inner.name, self.inner.bytes
            );
        }
    }
}

/// Arena ranges as the device layers' currency: `take` reserves (no driver call) and wraps the
/// range in a [`DeviceBuf`] that gives it back on drop.
impl DeviceMemory for Arena {
    fn take<T: DeviceRepr>(
        &self,
        stream: &Arc<CudaStream>,
        len: usize,
        what: &'static str,
    ) -> kiln_cuda::Result<DeviceBuf<T>> {
        let len = len.max(1);
        let bytes = len
            .checked_mul(size_of::<T>())
            .ok_or_else(|| CudaError::InvalidArgument(format!("{what}: {len} values overflow")))?;
        // Reserved as bytes: the backing must be `'static`, whatever `T` is.
        let r = self.reserve::<u8>(bytes).map_err(|e| CudaError::InvalidArgument(format!("{what}: {e}")))?;
        let ptr = r.device_ptr();
        // SAFETY: the reservation is `len` values of `T` inside this arena's allocation on the
        // stream's device, exclusively ours while the reservation lives, and the buffer keeps it.
        Ok(unsafe { DeviceBuf::borrowed(stream, ptr, len, Box::new(r)) })
    }
}

/// A typed range of an [`Arena`]: `len` values of `T` at an aligned offset. Gives its range
/// back on drop, without touching the driver. Holds the arena's bookkeeping alive, so the
/// arena cannot be released while it exists.
#[derive(Debug)]
pub struct Reservation<T> {
    arena: Arc<ArenaInner>,
    offset: u64,
    span: u64,
    len: usize,
    _t: PhantomData<T>,
}

impl<T: DeviceRepr> Reservation<T> {
    /// Device address of the first value.
    pub fn device_ptr(&self) -> sys::CUdeviceptr {
        self.arena.ptr + self.offset
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds no values.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Offset in the arena, bytes.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Bytes of the range (rounded up to [`ALIGN`]).
    pub fn span(&self) -> u64 {
        self.span
    }

    /// Copies `host` into the start of the range on `stream` and waits for it.
    pub fn upload(&mut self, stream: &CudaStream, host: &[T]) -> Result<(), VramError> {
        if host.len() > self.len {
            return Err(VramError::CopyTooLong { len: host.len(), capacity: self.len });
        }
        // SAFETY: the destination range lies inside the arena (`host.len() <= len`); the
        // stream is waited on before `host` can go away.
        unsafe { result::memcpy_htod_async(self.device_ptr(), host, stream.cu_stream()) }.ctx("cuMemcpyHtoDAsync")?;
        stream.synchronize().ctx("cuStreamSynchronize")?;
        Ok(())
    }

    /// Copies the first `out.len()` values of the range into `out` on `stream` and waits.
    pub fn download(&self, stream: &CudaStream, out: &mut [T]) -> Result<(), VramError> {
        if out.len() > self.len {
            return Err(VramError::CopyTooLong { len: out.len(), capacity: self.len });
        }
        // SAFETY: the source range lies inside the arena; `out` outlives the wait below.
        unsafe { result::memcpy_dtoh_async(out, self.device_ptr(), stream.cu_stream()) }.ctx("cuMemcpyDtoHAsync")?;
        stream.synchronize().ctx("cuStreamSynchronize")?;
        Ok(())
    }
}

impl<T> Drop for Reservation<T> {
    fn drop(&mut self) {
        self.arena.ranges().release(self.offset, self.span);
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn ranges_reuse_and_coalesce() {
        let mut r = Ranges::new(4 * ALIGN);
        let a = r.reserve(1).unwrap();
        let b = r.reserve(ALIGN + 1).unwrap();
        assert_eq!(a, (0, ALIGN));
        assert_eq!(b, (ALIGN, 2 * ALIGN));
        assert!(r.reserve(2 * ALIGN).is_none());
        r.release(a.0, a.1);
        r.release(b.0, b.1);
        assert_eq!(r.reserve(4 * ALIGN), Some((0, 4 * ALIGN)));
    }

    proptest! {
        /// Random reserve/release sequences: ranges never overlap, stay inside, are aligned,
        /// and once everything is released the whole arena is one range again.
        #[test]
        fn ranges_never_overlap(cap in 1u64..64, ops in prop::collection::vec((any::<bool>(), 1u64..2048, any::<prop::sample::Index>()), 1..200)) {
            let capacity = cap * ALIGN;
            let mut r = Ranges::new(capacity);
            let mut live: Vec<(u64, u64)> = Vec::new();
            for (reserve, bytes, pick) in ops {
                if reserve || live.is_empty() {
                    if let Some((off, len)) = r.reserve(bytes) {
                        prop_assert_eq!(off % ALIGN, 0);
                        prop_assert!(len >= bytes && off + len <= capacity);
                        for &(o, l) in &live {
                            prop_assert!(off + len <= o || o + l <= off, "({off},{len}) overlaps ({o},{l})");
                        }
                        live.push((off, len));
                    } else {
                        prop_assert!(r.largest_free() < bytes.div_ceil(ALIGN) * ALIGN);
                    }
                } else {
                    let (off, len) = live.swap_remove(pick.index(live.len()));
                    r.release(off, len);
                }
                prop_assert_eq!(r.free_bytes() + live.iter().map(|l| l.1).sum::<u64>(), capacity);
            }
            for (off, len) in live.drain(..) {
                r.release(off, len);
            }
            prop_assert_eq!(r.largest_free(), capacity);
        }
    }
}
