//! The MSM engine: a context of planned scratch for one curve, and the sort → accumulate →
//! reduce pipeline over it. The 0/1/other path is in `split.rs`.

use std::sync::Arc;

use blstrs::{G1Projective, G2Projective, Scalar};
use kiln_cuda::cudarc::driver::{
    CudaEvent, CudaFunction, CudaSlice, CudaStream, CudaView, LaunchConfig, PushKernelArg,
};
use kiln_cuda::{CudaResultExt, Device, DeviceBuf, DeviceMemory, check_stream};
use kiln_field::DeviceLayout;

pub use split::GpuSplit;

use super::Curve;
use super::bases::{GpuBases, Scalars};
use super::plan::{FAN, Plan, Sizes, window_bits};
use crate::MsmError;

/// Threads per block of the other kernels. 128, not 256: the G1 reduction kernels use
/// 134–155 registers, so a 256-thread block (~37k registers) leaves one block = 8 warps per
/// SM, while 128-thread blocks fit 3 = 12 warps. A multiple of 32 (msm_classify needs it).
const BLOCK: u32 = 128;
/// Threads per block of `msm_accumulate_*`: MSM_ACC_BLOCK of kernels/msm/curve_kernels.cuh,
/// the kernel's `__launch_bounds__` (more threads fail to launch).
const ACC_BLOCK: u32 = kiln_kernels::msm::ACC_BLOCK;

struct Kernels {
    histogram: CudaFunction,
    scan: CudaFunction,
    scatter: CudaFunction,
    classify: CudaFunction,
    gather: CudaFunction,
    accumulate: CudaFunction,
    join_heads: CudaFunction,
    fixup: CudaFunction,
    reduce: CudaFunction,
    sum_groups: CudaFunction,
    combine: CudaFunction,
    sum_indexed: CudaFunction,
    fold: CudaFunction,
}

/// A planned MSM engine for one curve and at most `capacity` points. All scratch is
/// allocated (and poisoned) once in [`MsmContext::new`]; calls only launch kernels.
pub struct MsmContext {
    stream: Arc<CudaStream>,
    curve: Curve,
    capacity: usize,
    cap_c: u32,
    k: Kernels,
    scalars: DeviceBuf<u64>,
    counts: DeviceBuf<u32>,
    offsets: DeviceBuf<u32>,
    cursor: DeviceBuf<u32>,
    sorted: DeviceBuf<u32>,
    buckets: DeviceBuf<u8>,
    head: DeviceBuf<u8>,
    tail: DeviceBuf<u8>,
    head_b: DeviceBuf<u32>,
    tail_b: DeviceBuf<u32>,
    segs: DeviceBuf<u8>,
    fan: DeviceBuf<u8>,
    window_sums: DeviceBuf<u8>,
    /// The result: one Jacobian point in kiln-field's layout.
    out: DeviceBuf<u64>,
    zero_bits: DeviceBuf<u32>,
    one_bits: DeviceBuf<u32>,
    ones_idx: DeviceBuf<u32>,
    others_idx: DeviceBuf<u32>,
    split_counts: DeviceBuf<u32>,
    tail_scalars: DeviceBuf<u64>,
    ones_partials: DeviceBuf<u8>,
    ones_sum: DeviceBuf<u8>,
    split_id: u64,
    scratch: usize,
    /// With profiling on: an event recorded after each launch (see [`MsmContext::set_profiling`]).
    profile: Option<Vec<(&'static str, CudaEvent)>>,
}

impl std::fmt::Debug for MsmContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MsmContext")
            .field("curve", &self.curve)
            .field("capacity", &self.capacity)
            .field("scratch_bytes", &self.scratch)
            .finish_non_exhaustive()
    }
}

/// The null pointer of the kernels' optional arguments (`map`, `extra`: "none").
static NULL: u64 = 0;

/// Where the scalars of a call are on the device.
enum Staged<'a> {
    /// The context's own `scalars` buffer (host scalars uploaded there).
    Uploaded,
    /// The caller's device scalars (checked to hold the call's scalars).
    Device(CudaView<'a, u64>),
}

/// The first `n` scalars (`4n` words) of `staged`; `n > 0`.
fn scalar_view<'s>(staged: &'s Staged<'_>, uploaded: &'s CudaSlice<u64>, n: usize) -> CudaView<'s, u64> {
    match staged {
        Staged::Uploaded => uploaded.slice(..4 * n),
        Staged::Device(v) => v.slice(..4 * n),
    }
}

/// Records a profiling event named `name` (the kernel just launched) on `stream`, if
/// profiling is on (`profile` is `Some`).
fn mark(
    profile: &mut Option<Vec<(&'static str, CudaEvent)>>,
    stream: &Arc<CudaStream>,
    name: &'static str,
) -> Result<(), MsmError> {
    if let Some(events) = profile {
        // Timing events (None would create them with CU_EVENT_DISABLE_TIMING).
        let flags = kiln_cuda::cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT;
        let e = stream.context().new_event(Some(flags)).ctx("cuEventCreate")?;
        e.record(stream).ctx("cuEventRecord")?;
        events.push((name, e));
    }
    Ok(())
}

fn grid(x: usize, y: usize) -> LaunchConfig {
    grid_of(x, y, BLOCK)
}

fn grid_of(x: usize, y: usize, block: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: ((x as u32).div_ceil(block).max(1), y as u32, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: 0,
    }
}

fn u32_of(v: usize, what: &str) -> Result<u32, MsmError> {
    u32::try_from(v).map_err(|_| MsmError::InvalidArgument(format!("{what} = {v} exceeds u32")))
}

/// Launches kernel `$f` (a field of [`Kernels`]) on the context's stream with `args`: device
/// buffers as `&CudaSlice` / `&CudaView` (read) or `&mut CudaSlice` (written), so cudarc orders
/// each launch after the pending work of every buffer it touches, on any stream; sizes as
/// `&u32`; an absent optional pointer as `&NULL`. Only fields of `$self` other than `stream`,
/// `k` and `profile` may be borrowed by the arguments.
macro_rules! launch {
    ($self:ident, $f:ident, $cfg:expr, $name:literal; $($arg:expr),* $(,)?) => {{
        {
            let mut b = $self.stream.launch_builder(&$self.k.$f);
            $( b.arg($arg); )*
            // SAFETY: every argument matches the extern "C" signature of the kernel named in
            // kernels/msm/*.cu (buffers as device pointers, sizes as u32), every buffer was sized by
            // `Sizes` for this plan, and the kernels bounds-check their thread indices.
            unsafe { b.launch($cfg) }.ctx(concat!("cuLaunchKernel(", $name, ")"))?;
        }
        mark(&mut $self.profile, &$self.stream, $name)?;
    }};
}

/// The [`Kernels`] of one curve: the sort kernels and those of `kiln_kernels::msm::$curve`.
macro_rules! kernels {
    ($device:ident, $curve:ident) => {{
        use kiln_kernels::msm::{sort, $curve as c};
        Kernels {
            histogram: $device.kernel(sort::HISTOGRAM)?,
            scan: $device.kernel(sort::SCAN)?,
            scatter: $device.kernel(sort::SCATTER)?,
            classify: $device.kernel(sort::CLASSIFY)?,
            gather: $device.kernel(sort::GATHER_SCALARS)?,
            accumulate: $device.kernel(c::ACCUMULATE)?,
            join_heads: $device.kernel(c::JOIN_HEADS)?,
            fixup: $device.kernel(c::BUCKET_FIXUP)?,
            reduce: $device.kernel(c::BUCKET_REDUCE)?,
            sum_groups: $device.kernel(c::SUM_GROUPS)?,
            combine: $device.kernel(c::COMBINE)?,
            sum_indexed: $device.kernel(c::SUM_INDEXED)?,
            fold: $device.kernel(c::FOLD)?,
        }
    }};
}

// After the macros: the split path launches with them too.
mod split;

#[cfg(test)]
mod host_emulation;

impl MsmContext {
    /// A context for MSMs of at most `capacity` points in `curve`, with all scratch
    /// ([`scratch_bytes`](super::scratch_bytes)`(capacity, curve)`) taken from `mem` and poisoned now, on a new stream.
    pub fn new(device: &Arc<Device>, curve: Curve, capacity: usize, mem: &impl DeviceMemory) -> Result<Self, MsmError> {
        Self::on_stream(device, device.new_stream()?, curve, capacity, mem)
    }

    /// [`MsmContext::new`] on a given stream (a worker's lane stream: its MSMs then follow its
    /// H step in stream order, with no event in between).
    pub fn on_stream(
        device: &Arc<Device>,
        stream: Arc<CudaStream>,
        curve: Curve,
        capacity: usize,
        mem: &impl DeviceMemory,
    ) -> Result<Self, MsmError> {
        if capacity >= 1 << 31 {
            return Err(MsmError::InvalidArgument(format!("capacity {capacity}: at most 2^31 - 1 points")));
        }
        let k = match curve {
            Curve::G1 => kernels!(device, g1),
            Curve::G2 => kernels!(device, g2),
        };
        let z = Sizes::for_capacity(capacity);
        let x = curve.xyzz_bytes();
        let ctx = MsmContext {
            k,
            curve,
            capacity,
            cap_c: window_bits(capacity),
            scalars: mem.take_poisoned(&stream, z.scalars_u64, "msm scalars")?,
            counts: mem.take_poisoned(&stream, z.counts, "msm counts")?,
            offsets: mem.take_poisoned(&stream, z.offsets, "msm offsets")?,
            cursor: mem.take_poisoned(&stream, z.offsets, "msm cursor")?,
            sorted: mem.take_poisoned(&stream, z.sorted, "msm sorted")?,
            buckets: mem.take_poisoned(&stream, z.buckets * x, "msm buckets")?,
            head: mem.take_poisoned(&stream, z.partials * x, "msm head")?,
            tail: mem.take_poisoned(&stream, z.partials * x, "msm tail")?,
            head_b: mem.take_poisoned(&stream, z.partials, "msm head_b")?,
            tail_b: mem.take_poisoned(&stream, z.partials, "msm tail_b")?,
            segs: mem.take_poisoned(&stream, z.segs * x, "msm segs")?,
            fan: mem.take_poisoned(&stream, z.fan * x, "msm fan")?,
            window_sums: mem.take_poisoned(&stream, z.windows * x, "msm window_sums")?,
            out: mem.take_poisoned(&stream, curve.jacobian_bytes() / 8, "msm out")?,
            zero_bits: mem.take_poisoned(&stream, z.bits, "msm zero_bits")?,
            one_bits: mem.take_poisoned(&stream, z.bits, "msm one_bits")?,
            ones_idx: mem.take_poisoned(&stream, z.idx, "msm ones_idx")?,
            others_idx: mem.take_poisoned(&stream, z.idx, "msm others_idx")?,
            split_counts: mem.take_poisoned(&stream, 2, "msm split_counts")?,
            tail_scalars: mem.take_poisoned(&stream, z.tail_scalars_u64, "msm tail_scalars")?,
            ones_partials: mem.take_poisoned(&stream, z.ones_partials * x, "msm ones_partials")?,
            ones_sum: mem.take_poisoned(&stream, x, "msm ones_sum")?,
            split_id: 0,
            scratch: z.bytes(curve),
            profile: None,
            stream,
        };
        check_stream(&ctx.stream)?;
        Ok(ctx)
    }

    /// Turns per-kernel timing on or off. While on, every launch records an event (a little
    /// overhead per launch), and [`Self::take_profile`] returns the time of each kernel since
    /// the last take: where an MSM's time goes, for benchmarks and tuning.
    pub fn set_profiling(&mut self, on: bool) -> Result<(), MsmError> {
        self.profile = None;
        if on {
            self.profile = Some(Vec::new());
            self.mark("start")?;
        }
        Ok(())
    }

    /// Milliseconds per kernel name (summed over launches, in first-launch order) since
    /// profiling was turned on or last taken; empty when profiling is off.
    pub fn take_profile(&mut self) -> Result<Vec<(&'static str, f32)>, MsmError> {
        let Some(events) = self.profile.take() else { return Ok(Vec::new()) };
        let mut out: Vec<(&'static str, f32)> = Vec::new();
        if let Some(last) = events.last() {
            last.1.synchronize().ctx("cuEventSynchronize")?;
        }
        for pair in events.windows(2) {
            let ms = pair[0].1.elapsed_ms(&pair[1].1).ctx("cuEventElapsedTime")?;
            match out.iter_mut().find(|(n, _)| *n == pair[1].0) {
                Some(e) => e.1 += ms,
                None => out.push((pair[1].0, ms)),
            }
        }
        self.set_profiling(true)?;
        Ok(out)
    }

    /// Records a profiling event named `name`, if profiling is on.
    fn mark(&mut self, name: &'static str) -> Result<(), MsmError> {
        mark(&mut self.profile, &self.stream, name)
    }

    /// Fills every scratch buffer with [`kiln_cuda::POISON_BYTE`] (enqueued on the context's
    /// stream), as at creation, and invalidates the last [`GpuSplit`]. For tests: a later call
    /// whose kernels skip a value they should write, or read one an earlier call left, then
    /// gives garbage instead of a plausible result.
    pub fn poison_scratch(&mut self) -> Result<(), MsmError> {
        let s = &self.stream;
        for buf in [&mut self.scalars, &mut self.tail_scalars, &mut self.out] {
            kiln_cuda::poison(s, &mut **buf)?;
        }
        for buf in [
            &mut self.counts,
            &mut self.offsets,
            &mut self.cursor,
            &mut self.sorted,
            &mut self.head_b,
            &mut self.tail_b,
            &mut self.zero_bits,
            &mut self.one_bits,
            &mut self.ones_idx,
            &mut self.others_idx,
            &mut self.split_counts,
        ] {
            kiln_cuda::poison(s, &mut **buf)?;
        }
        for buf in [
            &mut self.buckets,
            &mut self.head,
            &mut self.tail,
            &mut self.segs,
            &mut self.fan,
            &mut self.window_sums,
            &mut self.ones_partials,
            &mut self.ones_sum,
        ] {
            kiln_cuda::poison(s, &mut **buf)?;
        }
        self.split_id += 1;
        Ok(())
    }

    /// The stream every call of this context runs on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// Device bytes this context holds (= [`scratch_bytes`](super::scratch_bytes) of its capacity and curve).
    pub fn scratch_bytes(&self) -> usize {
        self.scratch
    }

    /// Largest MSM this context can run.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// The plan a call of `n` points uses in this context.
    pub fn plan(&self, n: usize) -> Plan {
        Plan::with_c(n, window_bits(n).min(self.cap_c))
    }

    fn check_bases(&self, bases: &GpuBases, curve: Curve) -> Result<(), MsmError> {
        if bases.curve != curve || self.curve != curve {
            return Err(MsmError::InvalidArgument(format!(
                "curve mismatch: context {:?}, bases {:?}, call {curve:?}",
                self.curve, bases.curve
            )));
        }
        Ok(())
    }

    /// Where the scalars of this call are (uploading host scalars first).
    fn stage<'a>(&mut self, scalars: Scalars<'a>) -> Result<Staged<'a>, MsmError> {
        match scalars {
            Scalars::Host(s) => {
                if !s.is_empty() {
                    let mut dst = self.scalars.slice_mut(0..4 * s.len());
                    self.stream.memcpy_htod(Scalar::as_u64s(s), &mut dst).ctx("cuMemcpyHtoDAsync(scalars)")?;
                    self.mark("upload scalars")?;
                }
                Ok(Staged::Uploaded)
            }
            Scalars::Pinned(words) => {
                if words.len() % 4 != 0 {
                    return Err(MsmError::InvalidArgument(format!(
                        "pinned scalars: {} words are not whole scalars (4 words each)",
                        words.len()
                    )));
                }
                if !words.is_empty() {
                    let mut dst = self.scalars.slice_mut(0..words.len());
                    self.stream.memcpy_htod(words, &mut dst).ctx("cuMemcpyHtoDAsync(pinned scalars)")?;
                    self.mark("upload scalars")?;
                }
                Ok(Staged::Uploaded)
            }
            Scalars::Device(words, n) => Self::device_scalars(words, 0, n),
            Scalars::DeviceAt(words, offset, n) => Self::device_scalars(words, offset, n),
        }
    }

    /// Scalars `offset .. offset + n` of `words`, checked to lie within it.
    fn device_scalars(words: &CudaSlice<u64>, offset: usize, n: usize) -> Result<Staged<'_>, MsmError> {
        if offset.checked_add(n).and_then(|end| end.checked_mul(4)).is_none_or(|w| w > words.len()) {
            return Err(MsmError::InvalidArgument(format!(
                "device scalars: {} words hold no scalars {offset}..{offset}+{n}",
                words.len()
            )));
        }
        Ok(Staged::Device(words.slice(4 * offset..4 * (offset + n))))
    }

    /// Digits → counting sort of (bucket, point) per window, for the `plan.n` scalars of
    /// `staged` (point indices `i`), or with `None` of the last split's tail (point indices
    /// `others_idx[i]`).
    fn sort(&mut self, plan: &Plan, staged: Option<&Staged<'_>>) -> Result<(), MsmError> {
        let n = u32_of(plan.n, "n")?;
        let (c, w, nb) = (plan.c, u32_of(plan.windows, "windows")?, u32_of(plan.buckets, "buckets")?);
        let scalars = match staged {
            Some(staged) => scalar_view(staged, &self.scalars, plan.n),
            None => self.tail_scalars.slice(..4 * plan.n),
        };
        self.stream
            .memset_zeros(&mut self.counts.slice_mut(0..plan.windows * plan.buckets))
            .ctx("cuMemsetD8Async(counts)")?;
        mark(&mut self.profile, &self.stream, "memset counts")?;
        launch!(self, histogram, grid(plan.n, 1), "msm_histogram"; &scalars, &n, &c, &w, &mut *self.counts);
        let scan_cfg = LaunchConfig { grid_dim: (w, 1, 1), block_dim: (1024, 1, 1), shared_mem_bytes: 0 };
        launch!(self, scan, scan_cfg, "msm_scan"; &*self.counts, &nb, &mut *self.offsets, &mut *self.cursor);
        // One thread per (scalar, window): blockIdx.y is the window (see msm_scatter).
        if staged.is_none() {
            let map = self.others_idx.slice(..plan.n);
            launch!(self, scatter, grid(plan.n, plan.windows), "msm_scatter";
                &scalars, &map, &n, &c, &w, &mut *self.cursor, &mut *self.sorted);
        } else {
            launch!(self, scatter, grid(plan.n, plan.windows), "msm_scatter";
                &scalars, &NULL, &n, &c, &w, &mut *self.cursor, &mut *self.sorted);
        }
        Ok(())
    }

    /// Buckets → windows → one Jacobian point in `self.out`, plus the split's sum of the ones
    /// (`ones_sum`) when `with_ones`.
    fn reduce(&mut self, plan: &Plan, bases: &GpuBases, with_ones: bool) -> Result<Vec<u64>, MsmError> {
        let (n, c, w) = (u32_of(plan.n, "n")?, plan.c, u32_of(plan.windows, "windows")?);
        let nb = u32_of(plan.buckets, "buckets")?;
        let (chunk_len, chunks) = (u32_of(plan.chunk_len, "chunk")?, u32_of(plan.chunks, "chunks")?);
        let (seg_len, segs) = (u32_of(plan.segment_len, "segment")?, u32_of(plan.segments, "segments")?);
        launch!(self, accumulate, grid_of(plan.chunks, plan.windows, ACC_BLOCK), "msm_accumulate";
            &*bases.buf, &*self.sorted, &*self.offsets, &n, &nb, &w, &chunk_len, &chunks,
            &mut *self.buckets, &mut *self.head, &mut *self.tail, &mut *self.head_b, &mut *self.tail_b);
        // Every level, whatever the buckets: how long a bucket's run of heads is would take a
        // read-back; a level with nothing to join costs one launch of threads that return.
        for level in 0..join_levels(chunks) {
            launch!(self, join_heads, grid(plan.chunks, plan.windows), "msm_join_heads";
                &*self.offsets, &nb, &w, &chunk_len, &chunks, &level, &mut *self.head, &*self.head_b);
        }
        launch!(self, fixup, grid(plan.buckets, plan.windows), "msm_bucket_fixup";
            &*self.offsets, &nb, &w, &chunk_len, &chunks, &mut *self.buckets, &*self.head, &*self.tail);
        launch!(self, reduce, grid(plan.segments, plan.windows), "msm_bucket_reduce";
            &*self.buckets, &nb, &w, &seg_len, &segs, &mut *self.segs);
        let (fan, one) = (FAN as u32, 1u32);
        launch!(self, sum_groups, grid(FAN, plan.windows), "msm_sum_groups";
            &*self.segs, &mut *self.fan, &segs, &w, &fan);
        launch!(self, sum_groups, grid(1, plan.windows), "msm_sum_groups";
            &*self.fan, &mut *self.window_sums, &fan, &w, &one);
        if with_ones {
            launch!(self, combine, grid(1, 1), "msm_combine";
                &*self.window_sums, &w, &c, &*self.ones_sum, &mut *self.out);
        } else {
            launch!(self, combine, grid(1, 1), "msm_combine"; &*self.window_sums, &w, &c, &NULL, &mut *self.out);
        }
        self.result()
    }

    /// The Jacobian words of `self.out` (waits for the stream).
    fn result(&self) -> Result<Vec<u64>, MsmError> {
        let words = self.stream.clone_dtoh(&*self.out).ctx("cuMemcpyDtoH(result)")?;
        check_stream(&self.stream)?;
        Ok(words)
    }

    fn check_n(&self, n: usize) -> Result<(), MsmError> {
        if n > self.capacity {
            return Err(MsmError::TooLarge { n, capacity: self.capacity });
        }
        Ok(())
    }

    /// Raw Jacobian words of Σ scalars[i]·bases[i] (identity when n = 0).
    fn msm_raw(&mut self, bases: &GpuBases, scalars: Scalars<'_>) -> Result<Vec<u64>, MsmError> {
        let n = scalars.len();
        if n != bases.n {
            return Err(MsmError::LengthMismatch { bases: bases.n, scalars: n });
        }
        self.check_n(n)?;
        if n == 0 {
            return Ok(vec![0; self.curve.jacobian_bytes() / 8]);
        }
        let plan = self.plan(n);
        let staged = self.stage(scalars)?;
        self.sort(&plan, Some(&staged))?;
        self.reduce(&plan, bases, false)
    }

    /// Σ scalars[i]·bases[i] in G1.
    pub fn msm_g1(&mut self, bases: &GpuBases, scalars: Scalars<'_>) -> Result<G1Projective, MsmError> {
        self.check_bases(bases, Curve::G1)?;
        point(&self.msm_raw(bases, scalars)?)
    }

    /// Σ scalars[i]·bases[i] in G2.
    pub fn msm_g2(&mut self, bases: &GpuBases, scalars: Scalars<'_>) -> Result<G2Projective, MsmError> {
        self.check_bases(bases, Curve::G2)?;
        point(&self.msm_raw(bases, scalars)?)
    }

    /// Several scalar vectors over one G1 base set.
    pub fn msm_g1_batch(&mut self, bases: &GpuBases, sets: &[Scalars<'_>]) -> Result<Vec<G1Projective>, MsmError> {
        sets.iter().map(|s| self.msm_g1(bases, *s)).collect()
    }

    /// One scalar vector over several base sets of this context's curve (A, B_G1, L over the
    /// aux scalars): the digits are sorted once and shared. Returns raw results per set.
    fn multi_raw(&mut self, bases: &[&GpuBases], scalars: Scalars<'_>) -> Result<Vec<Vec<u64>>, MsmError> {
        let n = scalars.len();
        for b in bases {
            self.check_bases(b, self.curve)?;
            if b.n != n {
                return Err(MsmError::LengthMismatch { bases: b.n, scalars: n });
            }
        }
        self.check_n(n)?;
        if n == 0 {
            return Ok(vec![vec![0; self.curve.jacobian_bytes() / 8]; bases.len()]);
        }
        let plan = self.plan(n);
        let staged = self.stage(scalars)?;
        self.sort(&plan, Some(&staged))?;
        bases.iter().map(|b| self.reduce(&plan, b, false)).collect()
    }

    /// One scalar vector over several G1 base sets, sorting the digits once.
    pub fn msm_g1_multi(&mut self, bases: &[&GpuBases], scalars: Scalars<'_>) -> Result<Vec<G1Projective>, MsmError> {
        self.multi_raw(bases, scalars)?.iter().map(|w| point(w)).collect()
    }

    /// One scalar vector over several G2 base sets, sorting the digits once.
    pub fn msm_g2_multi(&mut self, bases: &[&GpuBases], scalars: Scalars<'_>) -> Result<Vec<G2Projective>, MsmError> {
        self.multi_raw(bases, scalars)?.iter().map(|w| point(w)).collect()
    }
}

/// Levels of `msm_join_heads` that sum any bucket's heads: a bucket has at most `chunks - 1`
/// (one per chunk after the one it starts in), so ⌈log2(chunks)⌉.
fn join_levels(chunks: u32) -> u32 {
    u32::BITS - chunks.saturating_sub(1).leading_zeros()
}

/// The point whose device words (one Jacobian point in kiln-field's layout) are `words`.
fn point<P: DeviceLayout>(words: &[u64]) -> Result<P, MsmError> {
    match P::from_u64s(words)?[..] {
        [p] => Ok(p),
        _ => Err(MsmError::InvalidArgument(format!("{} words are not one {}", words.len(), P::KERNEL_TYPE))),
    }
}
