//! The device layout of blstrs values: their own bytes.

use blstrs::{Fp, Fp2, G1Affine, G1Projective, G2Affine, G2Projective, Scalar};

/// A bad buffer handed to [`DeviceLayout::from_u64s`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    /// The buffer does not hold a whole number of values.
    #[error(
        "{len} u64 words are not a whole number of {ty} values ({per} words each): pass a buffer of n * {per} words"
    )]
    Ragged {
        /// Words in the buffer.
        len: usize,
        /// The type asked for.
        ty: &'static str,
        /// Words per value.
        per: usize,
    },
}

/// A blstrs type whose bytes are exactly what the kernels use, so slices of it move to and
/// from the device as `u64` words with no conversion.
///
/// # Safety
/// Implement only for types that are plain data made of `u64` words (no padding, no
/// pointers, every bit pattern allowed), `size_of::<Self>() == WORDS * 8` and
/// `align_of::<Self>() <= 8`. The impls below check size and alignment at compile time;
/// the "plain data" part holds because blstrs' types are `repr(transparent)` over blst's
/// C structs (`blst_fr { l: [u64; 4] }`, `blst_p1_affine { x, y: blst_fp }`, ...).
pub unsafe trait DeviceLayout: Copy + Sized + 'static {
    /// `u64` words per value.
    const WORDS: usize;
    /// The matching kernel type, e.g. `fr_t` or `g1_affine_t`.
    const KERNEL_TYPE: &'static str;

    /// The words of `values`, borrowed (no copy): ready for `stream.clone_htod`.
    fn as_u64s(values: &[Self]) -> &[u64] {
        // SAFETY: (trait contract) `Self` is WORDS plain u64s with alignment <= 8 and no
        // padding; the pointer is aligned for u64 because align_of::<Self>() is 8 (checked
        // below for each impl), and the length covers exactly the same bytes.
        unsafe { std::slice::from_raw_parts(values.as_ptr().cast::<u64>(), values.len() * Self::WORDS) }
    }

    /// The words of `values`, borrowed mutably (no copy): a download target, e.g. for
    /// `stream.memcpy_dtoh` of points a kernel computed.
    fn as_u64s_mut(values: &mut [Self]) -> &mut [u64] {
        // SAFETY: as in `as_u64s`; every bit pattern of the words is a valid `Self` (trait
        // contract), so whatever is written through the view leaves valid values.
        unsafe { std::slice::from_raw_parts_mut(values.as_mut_ptr().cast::<u64>(), values.len() * Self::WORDS) }
    }

    /// `words` viewed as values, in place (no copy): e.g. pinned upload buffers of `u64`
    /// words that a host computation writes scalars into.
    fn from_u64s_mut(words: &mut [u64]) -> Result<&mut [Self], LayoutError> {
        if words.len() % Self::WORDS != 0 {
            return Err(LayoutError::Ragged { len: words.len(), ty: Self::KERNEL_TYPE, per: Self::WORDS });
        }
        // SAFETY: (trait contract) `Self` is WORDS plain u64s with alignment 8 and no padding,
        // every bit pattern valid; the pointer is u64-aligned, the length covers the same
        // bytes, and the exclusive borrow moves to the result.
        Ok(unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<Self>(), words.len() / Self::WORDS) })
    }

    /// `words` viewed as values, in place (no copy): e.g. a pinned buffer of `u64` words the
    /// host wrote scalars into, read back.
    fn from_u64s_ref(words: &[u64]) -> Result<&[Self], LayoutError> {
        if words.len() % Self::WORDS != 0 {
            return Err(LayoutError::Ragged { len: words.len(), ty: Self::KERNEL_TYPE, per: Self::WORDS });
        }
        // SAFETY: as in `from_u64s_mut`, with a shared borrow.
        Ok(unsafe { std::slice::from_raw_parts(words.as_ptr().cast::<Self>(), words.len() / Self::WORDS) })
    }

    /// Values from device words (a byte copy, no validation: the device produces reduced
    /// field elements and valid points; a poisoned or garbage buffer gives garbage values,
    /// never undefined behaviour, since every bit pattern is a valid blst struct).
    fn from_u64s(words: &[u64]) -> Result<Vec<Self>, LayoutError> {
        if words.len() % Self::WORDS != 0 {
            return Err(LayoutError::Ragged { len: words.len(), ty: Self::KERNEL_TYPE, per: Self::WORDS });
        }
        let n = words.len() / Self::WORDS;
        let mut out: Vec<Self> = Vec::with_capacity(n);
        // SAFETY: `out` has room for n values = words.len() * 8 bytes; the regions do not
        // overlap; every bit pattern is a valid `Self` (trait contract), so set_len is sound.
        unsafe {
            std::ptr::copy_nonoverlapping(words.as_ptr(), out.as_mut_ptr().cast::<u64>(), words.len());
            out.set_len(n);
        }
        Ok(out)
    }
}

macro_rules! device_layout {
    ($t:ty, $words:expr, $kernel:literal) => {
        const _: () = assert!(size_of::<$t>() == $words * 8 && align_of::<$t>() == 8);
        // SAFETY: size and alignment checked just above; plain u64 data as the trait's docs say.
        unsafe impl DeviceLayout for $t {
            const WORDS: usize = $words;
            const KERNEL_TYPE: &'static str = $kernel;
        }
    };
}

device_layout!(Scalar, 4, "fr_t");
device_layout!(Fp, 6, "fp_t");
device_layout!(Fp2, 12, "fp2_t");
device_layout!(G1Affine, 12, "g1_affine_t");
device_layout!(G2Affine, 24, "g2_affine_t");
device_layout!(G1Projective, 18, "g1_jacobian_t");
device_layout!(G2Projective, 36, "g2_jacobian_t");
