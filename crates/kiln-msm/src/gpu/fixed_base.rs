//! Fixed-base scalar multiplication on the device: `k_i · G` for one point `G` and millions
//! of scalars `k_i`, the bulk of a Groth16 setup (kernels in `kernels/setup/`).
//!
//! The host builds a window table of `G` once ([`window_table`]: `d · 2^(c·w) · G` for every
//! window `w` and signed digit magnitude `d ≤ 2^(c−1)`); each scalar then costs one mixed
//! addition per window on the device and no doubling, and runs of [`AFFINE_RUN`] points share
//! one inversion for the affine result. Scalars go up and points come down in chunks of the
//! capacity given at creation, so the device memory used is fixed whatever the output size.

use std::sync::Arc;

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use kiln_cuda::cudarc::driver::{CudaFunction, CudaStream, LaunchConfig, PushKernelArg};
use kiln_cuda::{CudaResultExt, Device, DeviceBuf, DeviceMemory, check_stream, poison};
use kiln_field::DeviceLayout;
use rayon::prelude::*;

use super::Curve;
use crate::MsmError;

/// Bits per signed digit: 20 windows of 2^12 entries, a table of 7.5 MiB in G1 and 15 MiB in
/// G2 that stays in the H200's L2 cache.
pub const WINDOW_BITS: u32 = 13;
/// Points converted to affine per thread, sharing one field inversion.
pub const AFFINE_RUN: u32 = 32;
/// Threads per block: SETUP_BLOCK in kernels/setup/fixed_base.cuh (its `__launch_bounds__`).
const BLOCK: u32 = kiln_kernels::setup::BLOCK;

/// Windows of `c` bits covering a 255-bit scalar with signed digits (the top digit's carry
/// needs the 256th bit: msm.cuh's `for_each_digit`).
fn windows(c: u32) -> u32 {
    256u32.div_ceil(c)
}

/// The window table of `base`: entry `w · 2^(c−1) + d − 1` is `d · 2^(c·w) · base` (affine),
/// for `w < ceil(256 / c)` and `1 ≤ d ≤ 2^(c−1)`. Built on the host, in parallel per window.
pub fn window_table<G>(base: G, c: u32) -> Vec<G::AffineRepr>
where
    G: group::Curve + Send + Sync,
    G::AffineRepr: Send + Default + Copy,
{
    let half = 1usize << (c - 1);
    let window_bases: Vec<G> = std::iter::successors(Some(base), |b| Some((0..c).fold(*b, |p, _| p.double())))
        .take(windows(c) as usize)
        .collect();
    let proj: Vec<G> = window_bases
        .par_iter()
        .flat_map_iter(|&wb| std::iter::successors(Some(wb), move |p| Some(*p + wb)).take(half))
        .collect();
    let mut out = vec![G::AffineRepr::default(); proj.len()];
    G::batch_normalize(&proj, &mut out);
    out
}

/// Fixed-base multiplications by one point, planned for chunks of at most `capacity` scalars.
/// All device memory is taken from the given [`DeviceMemory`] at creation.
pub struct FixedBase {
    stream: Arc<CudaStream>,
    curve: Curve,
    capacity: usize,
    mul: CudaFunction,
    to_affine: CudaFunction,
    table: DeviceBuf<u64>,
    scalars: DeviceBuf<u64>,
    xyzz: DeviceBuf<u8>,
    scratch: DeviceBuf<u8>,
    out: DeviceBuf<u64>,
}

impl std::fmt::Debug for FixedBase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FixedBase")
            .field("curve", &self.curve)
            .field("capacity", &self.capacity)
            .finish_non_exhaustive()
    }
}

impl FixedBase {
    /// Multiplications of the G1 point `base`, in chunks of at most `capacity` scalars.
    pub fn g1(
        device: &Arc<Device>,
        base: G1Projective,
        capacity: usize,
        mem: &impl DeviceMemory,
    ) -> Result<Self, MsmError> {
        let table = window_table(base, WINDOW_BITS);
        Self::new(device, Curve::G1, G1Affine::as_u64s(&table), capacity, mem)
    }

    /// Multiplications of the G2 point `base`, in chunks of at most `capacity` scalars.
    pub fn g2(
        device: &Arc<Device>,
        base: G2Projective,
        capacity: usize,
        mem: &impl DeviceMemory,
    ) -> Result<Self, MsmError> {
        let table = window_table(base, WINDOW_BITS);
        Self::new(device, Curve::G2, G2Affine::as_u64s(&table), capacity, mem)
    }

    fn new(
        device: &Arc<Device>,
        curve: Curve,
        table_words: &[u64],
        capacity: usize,
        mem: &impl DeviceMemory,
    ) -> Result<Self, MsmError> {
        if capacity == 0 || capacity >= 1 << 31 {
            return Err(MsmError::InvalidArgument(format!("fixed-base capacity {capacity}: 1 to 2^31 - 1 scalars")));
        }
        let stream = device.new_stream()?;
        let (mul, to_affine) = match curve {
            Curve::G1 => (kiln_kernels::setup::g1::FIXED_BASE_MUL, kiln_kernels::setup::g1::FIXED_BASE_TO_AFFINE),
            Curve::G2 => (kiln_kernels::setup::g2::FIXED_BASE_MUL, kiln_kernels::setup::g2::FIXED_BASE_TO_AFFINE),
        };
        let mut table = mem.take::<u64>(&stream, table_words.len(), "fixed-base table")?;
        stream.memcpy_htod(table_words, &mut *table).ctx("cuMemcpyHtoDAsync(fixed-base table)")?;
        let fb = FixedBase {
            mul: device.kernel(mul)?,
            to_affine: device.kernel(to_affine)?,
            table,
            scalars: mem.take_poisoned(&stream, capacity * Scalar::WORDS, "fixed-base scalars")?,
            xyzz: mem.take_poisoned(&stream, capacity * curve.xyzz_bytes(), "fixed-base xyzz")?,
            scratch: mem.take_poisoned(&stream, capacity * curve.field_bytes(), "fixed-base scratch")?,
            out: mem.take_poisoned(&stream, capacity * curve.affine_bytes() / 8, "fixed-base out")?,
            stream,
            curve,
            capacity,
        };
        check_stream(&fb.stream)?;
        Ok(fb)
    }

    /// The group of the fixed point.
    pub fn curve(&self) -> Curve {
        self.curve
    }

    /// Scalars per chunk.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// `out[i] = scalars[i] · base` in G1 (identity for a zero scalar).
    pub fn mul_g1(&mut self, scalars: &[Scalar], out: &mut [G1Affine]) -> Result<(), MsmError> {
        self.expect(Curve::G1, scalars.len(), out.len())?;
        self.run(scalars, G1Affine::as_u64s_mut(out))
    }

    /// `out[i] = scalars[i] · base` in G2 (identity for a zero scalar).
    pub fn mul_g2(&mut self, scalars: &[Scalar], out: &mut [G2Affine]) -> Result<(), MsmError> {
        self.expect(Curve::G2, scalars.len(), out.len())?;
        self.run(scalars, G2Affine::as_u64s_mut(out))
    }

    fn expect(&self, curve: Curve, scalars: usize, out: usize) -> Result<(), MsmError> {
        if curve != self.curve {
            return Err(MsmError::InvalidArgument(format!("{curve:?} products from a {:?} fixed base", self.curve)));
        }
        if scalars != out {
            return Err(MsmError::LengthMismatch { bases: out, scalars });
        }
        Ok(())
    }

    fn run(&mut self, scalars: &[Scalar], out: &mut [u64]) -> Result<(), MsmError> {
        let words = self.curve.affine_bytes() / 8;
        let (c, w) = (WINDOW_BITS, windows(WINDOW_BITS));
        for (s, o) in scalars.chunks(self.capacity).zip(out.chunks_mut(self.capacity * words)) {
            let n = s.len() as u32; // < capacity < 2^31
            self.stream
                .memcpy_htod(Scalar::as_u64s(s), &mut self.scalars.slice_mut(..s.len() * Scalar::WORDS))
                .ctx("cuMemcpyHtoDAsync(fixed-base scalars)")?;
            poison(&self.stream, &mut self.out.slice_mut(..o.len()))?;
            let mut b = self.stream.launch_builder(&self.mul);
            b.arg(&*self.table).arg(&c).arg(&w).arg(&*self.scalars).arg(&n).arg(&*self.xyzz);
            // SAFETY: matches fixed_base_mul_*(affine*, u32 c, u32 windows, fr_t*, u32 n, xyzz*):
            // the table holds windows(c) · 2^(c−1) points (built for WINDOW_BITS), scalars and
            // xyzz hold `capacity` ≥ n elements, and the kernel bounds-checks i < n.
            unsafe { b.launch(grid(n as usize)) }.ctx("cuLaunchKernel(fixed_base_mul)")?;
            let runs = (n as usize).div_ceil(AFFINE_RUN as usize);
            let mut b = self.stream.launch_builder(&self.to_affine);
            b.arg(&*self.xyzz).arg(&n).arg(&AFFINE_RUN).arg(&*self.scratch).arg(&*self.out);
            // SAFETY: matches fixed_base_to_affine_*(xyzz*, u32 n, u32 per, field*, affine*):
            // xyzz, scratch and out hold `capacity` ≥ n elements; each thread converts the run
            // [t·per, min((t+1)·per, n)) and threads past n return.
            unsafe { b.launch(grid(runs)) }.ctx("cuLaunchKernel(fixed_base_to_affine)")?;
            self.stream.memcpy_dtoh(&self.out.slice(..o.len()), o).ctx("cuMemcpyDtoHAsync(fixed-base out)")?;
            check_stream(&self.stream)?;
        }
        Ok(())
    }
}

fn grid(threads: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: ((threads as u32).div_ceil(BLOCK).max(1), 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ff::Field;
    use group::Group;
    use rand_chacha::ChaCha20Rng;
    use rand_chacha::rand_core::SeedableRng;

    /// The table's entries are what the kernel assumes, and a scalar's signed digits over it
    /// sum to the scalar's multiple (the kernel's algorithm, run on the host).
    #[test]
    fn window_table_and_signed_digits_give_the_product() {
        let c = 5;
        let g = G1Projective::random(&mut ChaCha20Rng::seed_from_u64(1));
        let table = window_table(g, c);
        let half = 1usize << (c - 1);
        assert_eq!(table.len(), windows(c) as usize * half);
        assert_eq!(G1Projective::from(table[3]), g * Scalar::from(4u64));
        assert_eq!(G1Projective::from(table[2 * half + 1]), g * Scalar::from(2u64 << (2 * c)));
        let mut rng = ChaCha20Rng::seed_from_u64(2);
        for k in [Scalar::ZERO, Scalar::ONE, -Scalar::ONE, Scalar::random(&mut rng), Scalar::random(&mut rng)] {
            let bytes = k.to_bytes_le();
            let bit = |i: u32| (i < 256) as u64 * ((bytes[(i / 8).min(31) as usize] >> (i % 8)) & 1) as u64;
            let mut acc = G1Projective::identity();
            let mut carry = 0u64;
            for w in 0..windows(c) {
                let v = (0..c).map(|j| bit(w * c + j) << j).sum::<u64>() + carry;
                let (mag, neg) = if v > half as u64 { ((1u64 << c) - v, true) } else { (v, false) };
                carry = neg as u64;
                if mag != 0 {
                    let p = G1Projective::from(table[w as usize * half + mag as usize - 1]);
                    acc += if neg { -p } else { p };
                }
            }
            assert_eq!(acc, g * k);
        }
    }
}
