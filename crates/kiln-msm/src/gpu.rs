//! GPU Pippenger MSM in G1 and G2 (kernels in `kernels/msm/`: sort.cu, g1.cu, g2.cu).
//!
//! - [`GpuBases`]: a base set uploaded once and resident on the device (the SRS lives there).
//! - [`MsmContext`]: the plan for one curve and a maximum size; it allocates all its scratch
//!   ([`scratch_bytes`]) once at creation, from the [`DeviceMemory`] it is given, and never
//!   allocates in [`MsmContext::msm_g1`] and friends. Scalars come from the host or are
//!   already on the device ([`Scalars`]).
//! - Several MSMs per call: [`MsmContext::msm_g1_batch`] (several scalar vectors, one base
//!   set) and [`MsmContext::msm_g1_multi`] (one scalar vector over several base sets: the
//!   digits are sorted once and shared).
//! - The 0/1/other split on the device: [`MsmContext::split`] then [`MsmContext::msm_g1_split`].
//!
//! Correctness: every entry point is compared with [`crate::cpu`] by the GPU tests.

use std::sync::Arc;

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use kiln_cuda::cudarc::driver::{
    CudaEvent, CudaFunction, CudaSlice, CudaStream, DevicePtr, LaunchConfig, PushKernelArg,
};
use kiln_cuda::{CudaResultExt, Device, DeviceBuf, DeviceMemory, check_stream};

use crate::MsmError;

/// Curve-independent kernels (kernels/msm/sort.cu); the curve kernels are in `msm_g1` / `msm_g2`.
const SORT_MODULE: &str = "msm_sort";
/// Threads per block of the other kernels. 128, not 256: the G1 reduction kernels use
/// 134–155 registers, so a 256-thread block (~37k registers) leaves one block = 8 warps per
/// SM, while 128-thread blocks fit 3 = 12 warps. A multiple of 32 (msm_classify needs it).
const BLOCK: u32 = 128;
/// Threads per block of `msm_accumulate_*`: must equal MSM_ACC_BLOCK in
/// kernels/msm/curve_kernels.cuh (the kernel's `__launch_bounds__`; more threads fail to launch).
const ACC_BLOCK: u32 = 128;
/// Total accumulate threads (all windows) a plan aims at: ~4 waves of a 132-SM GPU.
const TARGET_CHUNK_THREADS: usize = 1 << 19;
/// Total bucket-reduction threads a plan aims at (about one wave of a 132-SM GPU)...
const TARGET_SEGMENT_THREADS: usize = 1 << 16;
/// ...but no segment shorter than this: each segment also pays ~1.5·log2(lo) additions to
/// scale its running sum by its first bucket index lo.
const MIN_SEGMENT: usize = 64;
/// Smallest chunk of sorted entries per accumulate thread.
const MIN_CHUNK: usize = 32;
/// First fan-in of the per-window segment sums (and of the ones of the split path): about the
/// square root of the segments per window, so both single-thread summing levels stay short.
const FAN: usize = 64;
/// Threads summing the bases whose scalar is 1.
const ONES_THREADS: usize = 1 << 14;
/// Smallest window size.
const MIN_C: u32 = 2;
/// Largest window size (2^26 points choose 20; larger sizes are not tested).
const MAX_C: u32 = 20;
/// Mixed-add equivalents per bucket of the reduction: 2 full XYZZ additions (14 products each
/// against 10 for a mixed add) plus the fix-up, the bucket store and reload.
const REDUCE_COST_PER_BUCKET: f64 = 4.0;

/// Which group an MSM runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Curve {
    /// G1 (over Fp): 96-byte affine bases.
    G1,
    /// G2 (over Fp2): 192-byte affine bases.
    G2,
}

impl Curve {
    /// Bytes of one Fp (G1) or Fp2 (G2) element.
    const fn field_bytes(self) -> usize {
        match self {
            Curve::G1 => 48,
            Curve::G2 => 96,
        }
    }
    /// Bytes of one affine base.
    pub const fn affine_bytes(self) -> usize {
        2 * self.field_bytes()
    }
    const fn xyzz_bytes(self) -> usize {
        4 * self.field_bytes()
    }
    const fn jacobian_bytes(self) -> usize {
        3 * self.field_bytes()
    }
    const fn suffix(self) -> &'static str {
        match self {
            Curve::G1 => "g1",
            Curve::G2 => "g2",
        }
    }
}

/// Pippenger parameters for `n` points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// Window size in bits.
    pub c: u32,
    /// Windows: `⌈256 / c⌉` (signed digits of a 255-bit scalar never carry out of the top).
    pub windows: usize,
    /// Buckets per window: `2^(c−1)`.
    pub buckets: usize,
    /// Accumulate threads per window.
    pub chunks: usize,
    /// Sorted entries per accumulate thread.
    pub chunk_len: usize,
    /// Buckets per reduction segment.
    pub segment_len: usize,
    /// Segments per window.
    pub segments: usize,
    /// Points.
    pub n: usize,
}

/// The window size for `n` points: minimises `windows × (n + 4·2^(c−1))` (n mixed adds into
/// buckets per window + the reduction of its `2^(c−1)` buckets, [`REDUCE_COST_PER_BUCKET`]
/// each). Non-decreasing in n. E.g. 2^20 → 16, 2^24 and 2^26 → 20 (13 windows instead of 16).
pub fn window_bits(n: usize) -> u32 {
    let cost = |c: u32| {
        let buckets = (1u64 << (c - 1)) as f64;
        (256usize.div_ceil(c as usize) as f64) * (n as f64 + REDUCE_COST_PER_BUCKET * buckets)
    };
    (MIN_C..=MAX_C).min_by(|a, b| cost(*a).total_cmp(&cost(*b))).unwrap_or(MAX_C)
}

/// The largest `m` in `[0, n]` with `window_bits(m) <= c` (0 when there is none), by binary
/// search: `window_bits` is non-decreasing.
fn largest_with_window_at_most(c: u32, n: usize) -> usize {
    // Invariant: window_bits(lo) <= c (or lo = 0), window_bits(hi) > c (or hi = n + 1).
    let (mut lo, mut hi) = (0usize, n + 1);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if window_bits(mid) <= c {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

impl Plan {
    /// The plan for `n` points with window size `c`.
    pub fn with_c(n: usize, c: u32) -> Plan {
        let windows = 256usize.div_ceil(c as usize);
        let buckets = 1usize << (c - 1);
        let chunks = n.div_ceil(MIN_CHUNK).clamp(1, (TARGET_CHUNK_THREADS / windows).max(1));
        let chunk_len = n.div_ceil(chunks).max(1);
        let segment_len = (buckets * windows).div_ceil(TARGET_SEGMENT_THREADS).max(MIN_SEGMENT).clamp(1, buckets);
        let segments = buckets.div_ceil(segment_len);
        Plan { c, windows, buckets, chunks, chunk_len, segment_len, segments, n }
    }

    /// The plan for `n` points (window size from [`window_bits`]).
    pub fn new(n: usize) -> Plan {
        Plan::with_c(n, window_bits(n))
    }
}

/// Element counts of each scratch buffer (u32 words or points), for one curve and size.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Sizes {
    scalars_u64: usize,
    counts: usize,
    offsets: usize,
    sorted: usize,
    buckets: usize,
    partials: usize,
    segs: usize,
    fan: usize,
    windows: usize,
    // split path
    bits: usize,
    idx: usize,
    tail_scalars_u64: usize,
    ones_partials: usize,
}

impl Sizes {
    fn max(self, o: Sizes) -> Sizes {
        Sizes {
            scalars_u64: self.scalars_u64.max(o.scalars_u64),
            counts: self.counts.max(o.counts),
            offsets: self.offsets.max(o.offsets),
            sorted: self.sorted.max(o.sorted),
            buckets: self.buckets.max(o.buckets),
            partials: self.partials.max(o.partials),
            segs: self.segs.max(o.segs),
            fan: self.fan.max(o.fan),
            windows: self.windows.max(o.windows),
            bits: self.bits.max(o.bits),
            idx: self.idx.max(o.idx),
            tail_scalars_u64: self.tail_scalars_u64.max(o.tail_scalars_u64),
            ones_partials: self.ones_partials.max(o.ones_partials),
        }
    }

    fn of_plan(p: &Plan) -> Sizes {
        let n = p.n.max(1);
        Sizes {
            scalars_u64: 4 * n,
            counts: p.windows * p.buckets,
            offsets: p.windows * (p.buckets + 1),
            sorted: p.windows * n,
            buckets: p.windows * p.buckets,
            partials: p.windows * p.chunks,
            segs: p.windows * p.segments,
            fan: p.windows * FAN,
            windows: p.windows,
            bits: n.div_ceil(32),
            idx: n,
            tail_scalars_u64: 4 * n,
            ones_partials: ONES_THREADS,
        }
    }

    /// The largest need of any call of at most `n` points, exactly.
    ///
    /// A call of `m <= n` points uses `c = window_bits(m)` (non-decreasing in m), and for a
    /// fixed `c` every buffer grows with m. So the worst call for each window size `c` is the
    /// largest `m <= n` with `window_bits(m) == c`; that `m` is found by binary search. (Sizing
    /// every `c` for `n` points, as before, made a 2^26 context reserve a 2-bit plan's
    /// 128 windows × n sorted entries: 32 GiB.)
    fn for_capacity(n: usize) -> Sizes {
        let top = window_bits(n);
        let mut z = Sizes::of_plan(&Plan::with_c(n, top));
        for c in MIN_C..top {
            let m = largest_with_window_at_most(c, n);
            if m > 0 && window_bits(m) == c {
                z = z.max(Sizes::of_plan(&Plan::with_c(m, c)));
            }
        }
        z
    }

    fn bytes(&self, curve: Curve) -> usize {
        let x = curve.xyzz_bytes();
        8 * (self.scalars_u64 + self.tail_scalars_u64)
            + 4 * (self.counts + 2 * self.offsets + self.sorted + 2 * self.partials + 2 * self.bits + 2 * self.idx + 2)
            + x * (self.buckets
                + 2 * self.partials
                + self.segs
                + self.fan
                + self.windows
                + self.ones_partials
                + FAN
                + 1)
            + curve.jacobian_bytes()
    }
}

/// Exact device bytes an [`MsmContext`] for up to `n` points in `curve` allocates beyond its
/// inputs (bases and device scalars), so the VRAM planner can reserve it up front.
pub fn scratch_bytes(n: usize, curve: Curve) -> usize {
    Sizes::for_capacity(n).bytes(curve)
}

/// A base set resident on the device.
pub struct GpuBases {
    buf: DeviceBuf<u64>,
    n: usize,
    curve: Curve,
}

impl std::fmt::Debug for GpuBases {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuBases").field("n", &self.n).field("curve", &self.curve).finish_non_exhaustive()
    }
}

fn g1_words(bases: &[G1Affine]) -> &[u64] {
    // SAFETY: G1Affine is repr(transparent) over blst_p1_affine = two blst_fp of [u64; 6]:
    // 12 plain u64 per point, no padding; the slice lives as long as `bases`.
    unsafe { std::slice::from_raw_parts(bases.as_ptr().cast::<u64>(), bases.len() * 12) }
}

fn g2_words(bases: &[G2Affine]) -> &[u64] {
    // SAFETY: G2Affine is repr(transparent) over blst_p2_affine = two blst_fp2 = 24 u64.
    unsafe { std::slice::from_raw_parts(bases.as_ptr().cast::<u64>(), bases.len() * 24) }
}

fn scalar_words(scalars: &[Scalar]) -> &[u64] {
    // SAFETY: Scalar is repr(transparent) over blst_fr { l: [u64; 4] } (Montgomery form).
    unsafe { std::slice::from_raw_parts(scalars.as_ptr().cast::<u64>(), scalars.len() * 4) }
}

impl GpuBases {
    /// Room for `capacity` bases of `curve` from `mem`, holding none yet: filled by
    /// [`GpuBases::load_g1`] / [`GpuBases::load_g2`] (the streamed SRS reuses one such set per
    /// chunk).
    pub fn with_capacity(
        stream: &Arc<CudaStream>,
        curve: Curve,
        capacity: usize,
        mem: &impl DeviceMemory,
    ) -> Result<Self, MsmError> {
        if capacity >= 1 << 31 {
            return Err(MsmError::InvalidArgument(format!("{capacity} bases: at most 2^31 - 1 supported")));
        }
        let buf = mem.take_poisoned::<u64>(stream, capacity * curve.affine_bytes() / 8, "msm bases")?;
        Ok(GpuBases { buf, n: 0, curve })
    }

    fn load(&mut self, stream: &Arc<CudaStream>, words: &[u64], n: usize, curve: Curve) -> Result<(), MsmError> {
        if curve != self.curve || words.len() > self.buf.len() {
            return Err(MsmError::InvalidArgument(format!(
                "{n} {curve:?} bases into a set of {} {:?} bases",
                self.buf.len() * 8 / self.curve.affine_bytes(),
                self.curve
            )));
        }
        if !words.is_empty() {
            stream.memcpy_htod(words, &mut self.buf.slice_mut(..words.len())).ctx("cuMemcpyHtoDAsync(bases)")?;
        }
        self.n = n;
        Ok(())
    }

    /// Replaces the bases with `bases` (async on `stream`; later work on `stream` sees them).
    pub fn load_g1(&mut self, stream: &Arc<CudaStream>, bases: &[G1Affine]) -> Result<(), MsmError> {
        self.load(stream, g1_words(bases), bases.len(), Curve::G1)
    }

    /// The G2 form of [`GpuBases::load_g1`].
    pub fn load_g2(&mut self, stream: &Arc<CudaStream>, bases: &[G2Affine]) -> Result<(), MsmError> {
        self.load(stream, g2_words(bases), bases.len(), Curve::G2)
    }

    /// Uploads G1 bases (infinity = all zeros, as blst) into memory from `mem` and waits.
    pub fn g1(device: &Device, bases: &[G1Affine], mem: &impl DeviceMemory) -> Result<Self, MsmError> {
        let stream = device.new_stream()?;
        let mut set = Self::with_capacity(&stream, Curve::G1, bases.len(), mem)?;
        set.load_g1(&stream, bases)?;
        check_stream(&stream)?;
        Ok(set)
    }

    /// Uploads G2 bases and waits.
    pub fn g2(device: &Device, bases: &[G2Affine], mem: &impl DeviceMemory) -> Result<Self, MsmError> {
        let stream = device.new_stream()?;
        let mut set = Self::with_capacity(&stream, Curve::G2, bases.len(), mem)?;
        set.load_g2(&stream, bases)?;
        check_stream(&stream)?;
        Ok(set)
    }

    /// Number of bases.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The group of the bases.
    pub fn curve(&self) -> Curve {
        self.curve
    }

    /// Device bytes held.
    pub fn bytes(&self) -> usize {
        self.n * self.curve.affine_bytes()
    }
}

/// Scalars for an MSM: on the host or on the device.
#[derive(Debug, Clone, Copy)]
pub enum Scalars<'a> {
    /// Host scalars, uploaded into the context's own buffer.
    Host(&'a [Scalar]),
    /// Device scalars: the first `len` Montgomery-form scalars (4 little-endian u64 each) of
    /// `words`, e.g. h from the NTT step.
    Device(&'a CudaSlice<u64>, usize),
    /// Device scalars `offset .. offset + len` of `words` (a chunk of a longer vector).
    DeviceAt(&'a CudaSlice<u64>, usize, usize),
}

impl Scalars<'_> {
    fn len(&self) -> usize {
        match self {
            Scalars::Host(s) => s.len(),
            Scalars::Device(_, n) | Scalars::DeviceAt(_, _, n) => *n,
        }
    }
}

/// A device-side 0/1/other split of one scalar vector (see [`crate::split`]); lives in the
/// context that made it and is invalidated by that context's next `split` call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuSplit {
    /// Number of scalars classified.
    pub n: usize,
    /// How many are 1.
    pub ones: usize,
    /// How many are neither 0 nor 1 (the tail).
    pub others: usize,
    id: u64,
}

struct Kernels {
    histogram: CudaFunction,
    scan: CudaFunction,
    scatter: CudaFunction,
    classify: CudaFunction,
    gather: CudaFunction,
    accumulate: CudaFunction,
    fixup: CudaFunction,
    reduce: CudaFunction,
    sum_groups: CudaFunction,
    combine: CudaFunction,
    sum_indexed: CudaFunction,
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
    out: DeviceBuf<u8>,
    zero_bits: DeviceBuf<u32>,
    one_bits: DeviceBuf<u32>,
    ones_idx: DeviceBuf<u32>,
    others_idx: DeviceBuf<u32>,
    split_counts: DeviceBuf<u32>,
    tail_scalars: DeviceBuf<u64>,
    ones_partials: DeviceBuf<u8>,
    ones_fan: DeviceBuf<u8>,
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

fn ptr<T>(buf: &CudaSlice<T>, stream: &Arc<CudaStream>) -> u64 {
    let (p, _sync) = buf.device_ptr(stream);
    p
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

/// Launches `f` with `args` (all passed as 64-bit pointers or 32-bit values).
macro_rules! launch {
    ($self:ident, $f:expr, $cfg:expr, $name:literal; $($arg:expr),* $(,)?) => {{
        {
            let mut b = $self.stream.launch_builder(&$f);
            $( b.arg(&$arg); )*
            // SAFETY: every argument matches the extern "C" signature of the kernel named in
            // kernels/msm/*.cu (device pointers as u64, sizes as u32), every buffer was sized by
            // `Sizes` for this plan, and the kernels bounds-check their thread indices.
            unsafe { b.launch($cfg) }.ctx(concat!("cuLaunchKernel(", $name, ")"))?;
        }
        $self.mark($name)?;
    }};
}

impl MsmContext {
    /// A context for MSMs of at most `capacity` points in `curve`, with all scratch
    /// ([`scratch_bytes`]`(capacity, curve)`) taken from `mem` and poisoned now, on a new stream.
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
        let f = |name: &str| device.function(SORT_MODULE, name);
        let s = curve.suffix();
        let curve_module = format!("msm_{s}");
        let g = |name: &str| device.function(&curve_module, name);
        let k = Kernels {
            histogram: f("msm_histogram")?,
            scan: f("msm_scan")?,
            scatter: f("msm_scatter")?,
            classify: f("msm_classify")?,
            gather: f("msm_gather_scalars")?,
            accumulate: g(&format!("msm_accumulate_{s}"))?,
            fixup: g(&format!("msm_bucket_fixup_{s}"))?,
            reduce: g(&format!("msm_bucket_reduce_{s}"))?,
            sum_groups: g(&format!("msm_sum_groups_{s}"))?,
            combine: g(&format!("msm_combine_{s}"))?,
            sum_indexed: g(&format!("msm_sum_indexed_{s}"))?,
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
            out: mem.take_poisoned(&stream, curve.jacobian_bytes(), "msm out")?,
            zero_bits: mem.take_poisoned(&stream, z.bits, "msm zero_bits")?,
            one_bits: mem.take_poisoned(&stream, z.bits, "msm one_bits")?,
            ones_idx: mem.take_poisoned(&stream, z.idx, "msm ones_idx")?,
            others_idx: mem.take_poisoned(&stream, z.idx, "msm others_idx")?,
            split_counts: mem.take_poisoned(&stream, 2, "msm split_counts")?,
            tail_scalars: mem.take_poisoned(&stream, z.tail_scalars_u64, "msm tail_scalars")?,
            ones_partials: mem.take_poisoned(&stream, z.ones_partials * x, "msm ones_partials")?,
            ones_fan: mem.take_poisoned(&stream, FAN * x, "msm ones_fan")?,
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

    /// Records a profiling event named `name` (the kernel just launched), if profiling is on.
    fn mark(&mut self, name: &'static str) -> Result<(), MsmError> {
        if let Some(events) = &mut self.profile {
            // Timing events (None would create them with CU_EVENT_DISABLE_TIMING).
            let flags = kiln_cuda::cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT;
            let e = self.stream.context().new_event(Some(flags)).ctx("cuEventCreate")?;
            e.record(&self.stream).ctx("cuEventRecord")?;
            events.push((name, e));
        }
        Ok(())
    }

    /// The stream every call of this context runs on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// Device bytes this context holds (= [`scratch_bytes`] of its capacity and curve).
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

    /// Device pointer of the scalars of this call (uploading host scalars first).
    fn scalars_ptr(&mut self, scalars: Scalars<'_>) -> Result<u64, MsmError> {
        match scalars {
            Scalars::Host(s) => {
                if s.is_empty() {
                    return Ok(ptr(&self.scalars, &self.stream));
                }
                let mut dst = self.scalars.slice_mut(0..4 * s.len());
                self.stream.memcpy_htod(scalar_words(s), &mut dst).ctx("cuMemcpyHtoDAsync(scalars)")?;
                self.mark("upload scalars")?;
                Ok(ptr(&self.scalars, &self.stream))
            }
            Scalars::Device(words, n) => Self::device_scalars_ptr(&self.stream, words, 0, n),
            Scalars::DeviceAt(words, offset, n) => Self::device_scalars_ptr(&self.stream, words, offset, n),
        }
    }

    /// Device pointer of scalars `offset .. offset + n` of `words`, checked to lie within it.
    fn device_scalars_ptr(
        stream: &Arc<CudaStream>,
        words: &CudaSlice<u64>,
        offset: usize,
        n: usize,
    ) -> Result<u64, MsmError> {
        if offset.checked_add(n).and_then(|end| end.checked_mul(4)).is_none_or(|w| w > words.len()) {
            return Err(MsmError::InvalidArgument(format!(
                "device scalars: {} words hold no scalars {offset}..{offset}+{n}",
                words.len()
            )));
        }
        Ok(ptr(words, stream) + 32 * offset as u64)
    }

    /// Digits → counting sort of (bucket, point) per window, for `n` scalars at `scalars_ptr`
    /// whose point indices are `map[i]` (or `i` when `map == 0`).
    fn sort(&mut self, plan: &Plan, scalars_ptr: u64, map: u64) -> Result<(), MsmError> {
        let n = u32_of(plan.n, "n")?;
        let (c, w, nb) = (plan.c, u32_of(plan.windows, "windows")?, u32_of(plan.buckets, "buckets")?);
        let counts = ptr(&self.counts, &self.stream);
        let offsets = ptr(&self.offsets, &self.stream);
        let cursor = ptr(&self.cursor, &self.stream);
        let sorted = ptr(&self.sorted, &self.stream);
        let mut cview = self.counts.slice_mut(0..plan.windows * plan.buckets);
        self.stream.memset_zeros(&mut cview).ctx("cuMemsetD8Async(counts)")?;
        self.mark("memset counts")?;
        launch!(self, self.k.histogram, grid(plan.n, 1), "msm_histogram"; scalars_ptr, n, c, w, counts);
        let scan_cfg = LaunchConfig { grid_dim: (w, 1, 1), block_dim: (1024, 1, 1), shared_mem_bytes: 0 };
        launch!(self, self.k.scan, scan_cfg, "msm_scan"; counts, nb, offsets, cursor);
        launch!(self, self.k.scatter, grid(plan.n, 1), "msm_scatter"; scalars_ptr, map, n, c, w, cursor, sorted);
        Ok(())
    }

    /// Buckets → windows → one Jacobian point in `self.out` (+ `extra` XYZZ if non-zero ptr).
    fn reduce(&mut self, plan: &Plan, bases: &GpuBases, extra: u64) -> Result<Vec<u64>, MsmError> {
        let s = &self.stream;
        let (n, c, w) = (u32_of(plan.n, "n")?, plan.c, u32_of(plan.windows, "windows")?);
        let nb = u32_of(plan.buckets, "buckets")?;
        let (chunk_len, chunks) = (u32_of(plan.chunk_len, "chunk")?, u32_of(plan.chunks, "chunks")?);
        let (seg_len, segs) = (u32_of(plan.segment_len, "segment")?, u32_of(plan.segments, "segments")?);
        let (bases_p, sorted, offsets) = (ptr(&bases.buf, s), ptr(&self.sorted, s), ptr(&self.offsets, s));
        let (buckets, head, tail) = (ptr(&self.buckets, s), ptr(&self.head, s), ptr(&self.tail, s));
        let (head_b, tail_b) = (ptr(&self.head_b, s), ptr(&self.tail_b, s));
        let (segs_p, fan_p, wsum, out) =
            (ptr(&self.segs, s), ptr(&self.fan, s), ptr(&self.window_sums, s), ptr(&self.out, s));
        launch!(self, self.k.accumulate, grid_of(plan.chunks, plan.windows, ACC_BLOCK), "msm_accumulate";
            bases_p, sorted, offsets, n, nb, w, chunk_len, chunks, buckets, head, tail, head_b, tail_b);
        launch!(self, self.k.fixup, grid(plan.buckets, plan.windows), "msm_bucket_fixup";
            offsets, nb, w, chunk_len, chunks, buckets, head, tail);
        launch!(self, self.k.reduce, grid(plan.segments, plan.windows), "msm_bucket_reduce";
            buckets, nb, w, seg_len, segs, segs_p);
        let fan = FAN as u32;
        launch!(self, self.k.sum_groups, grid(FAN, plan.windows), "msm_sum_groups"; segs_p, fan_p, segs, w, fan);
        let one = 1u32;
        launch!(self, self.k.sum_groups, grid(1, plan.windows), "msm_sum_groups"; fan_p, wsum, fan, w, one);
        launch!(self, self.k.combine, grid(1, 1), "msm_combine"; wsum, w, c, extra, out);
        let bytes = self.stream.clone_dtoh(&*self.out).ctx("cuMemcpyDtoH(result)")?;
        check_stream(&self.stream)?;
        Ok(bytes.chunks_exact(8).map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes"))).collect())
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
        let sp = self.scalars_ptr(scalars)?;
        self.sort(&plan, sp, 0)?;
        self.reduce(&plan, bases, 0)
    }

    /// Σ scalars[i]·bases[i] in G1.
    pub fn msm_g1(&mut self, bases: &GpuBases, scalars: Scalars<'_>) -> Result<G1Projective, MsmError> {
        self.check_bases(bases, Curve::G1)?;
        Ok(g1_from_words(&self.msm_raw(bases, scalars)?))
    }

    /// Σ scalars[i]·bases[i] in G2.
    pub fn msm_g2(&mut self, bases: &GpuBases, scalars: Scalars<'_>) -> Result<G2Projective, MsmError> {
        self.check_bases(bases, Curve::G2)?;
        Ok(g2_from_words(&self.msm_raw(bases, scalars)?))
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
        let sp = self.scalars_ptr(scalars)?;
        self.sort(&plan, sp, 0)?;
        bases.iter().map(|b| self.reduce(&plan, b, 0)).collect()
    }

    /// One scalar vector over several G1 base sets, sorting the digits once.
    pub fn msm_g1_multi(&mut self, bases: &[&GpuBases], scalars: Scalars<'_>) -> Result<Vec<G1Projective>, MsmError> {
        Ok(self.multi_raw(bases, scalars)?.iter().map(|w| g1_from_words(w)).collect())
    }

    /// One scalar vector over several G2 base sets, sorting the digits once.
    pub fn msm_g2_multi(&mut self, bases: &[&GpuBases], scalars: Scalars<'_>) -> Result<Vec<G2Projective>, MsmError> {
        Ok(self.multi_raw(bases, scalars)?.iter().map(|w| g2_from_words(w)).collect())
    }

    /// Classifies `scalars` into 0 / 1 / other on the device (bitmaps, compacted index lists
    /// and the compacted tail scalars), for [`Self::msm_g1_split`] / [`Self::msm_g2_split`] over
    /// any number of base sets. One small device→host copy (the two counts).
    pub fn split(&mut self, scalars: Scalars<'_>) -> Result<GpuSplit, MsmError> {
        let n = scalars.len();
        self.check_n(n)?;
        self.split_id += 1;
        if n == 0 {
            return Ok(GpuSplit { n, ones: 0, others: 0, id: self.split_id });
        }
        let sp = self.scalars_ptr(scalars)?;
        let s = &self.stream;
        let n32 = u32_of(n, "n")?;
        let (zb, ob, oi, xi, cnt) = (
            ptr(&self.zero_bits, s),
            ptr(&self.one_bits, s),
            ptr(&self.ones_idx, s),
            ptr(&self.others_idx, s),
            ptr(&self.split_counts, s),
        );
        self.stream.memset_zeros(&mut *self.split_counts).ctx("cuMemsetD8Async(split counts)")?;
        launch!(self, self.k.classify, grid(n, 1), "msm_classify"; sp, n32, zb, ob, oi, xi, cnt);
        let counts = self.stream.clone_dtoh(&*self.split_counts).ctx("cuMemcpyDtoH(split counts)")?;
        check_stream(&self.stream)?;
        let (ones, others) = (counts[0] as usize, counts[1] as usize);
        if ones + others > n {
            return Err(MsmError::InvalidArgument(format!("split counts {ones} + {others} > {n}: kernel bug")));
        }
        let tail = ptr(&self.tail_scalars, &self.stream);
        let cnt1 = cnt + 4; // &counts[1]
        launch!(self, self.k.gather, grid(others, 1), "msm_gather_scalars"; sp, xi, cnt1, tail);
        Ok(GpuSplit { n, ones, others, id: self.split_id })
    }

    /// The device bitmaps of the last split: `(zeros, ones)`, one bit per scalar, 32 per word.
    pub fn split_bitmaps(&self, split: &GpuSplit) -> Result<(Vec<u32>, Vec<u32>), MsmError> {
        self.check_split(split)?;
        let words = split.n.div_ceil(32);
        let z = self.stream.clone_dtoh(&self.zero_bits.slice(0..words)).ctx("cuMemcpyDtoH(zero bits)")?;
        let o = self.stream.clone_dtoh(&self.one_bits.slice(0..words)).ctx("cuMemcpyDtoH(one bits)")?;
        check_stream(&self.stream)?;
        Ok((z, o))
    }

    fn check_split(&self, split: &GpuSplit) -> Result<(), MsmError> {
        if split.id != self.split_id {
            return Err(MsmError::InvalidArgument(
                "this GpuSplit was made by another context or overwritten by a later split: split again".into(),
            ));
        }
        Ok(())
    }

    fn split_raw(&mut self, bases: &GpuBases, split: &GpuSplit) -> Result<Vec<u64>, MsmError> {
        self.check_split(split)?;
        self.check_bases(bases, self.curve)?;
        if bases.n != split.n {
            return Err(MsmError::LengthMismatch { bases: bases.n, scalars: split.n });
        }
        let s = &self.stream;
        let (bp, oi, cnt) = (ptr(&bases.buf, s), ptr(&self.ones_idx, s), ptr(&self.split_counts, s));
        let (parts, fan_p, sum) = (ptr(&self.ones_partials, s), ptr(&self.ones_fan, s), ptr(&self.ones_sum, s));
        let p = ONES_THREADS as u32;
        launch!(self, self.k.sum_indexed, grid(ONES_THREADS, 1), "msm_sum_indexed"; bp, oi, cnt, p, parts);
        let (fan, one) = (FAN as u32, 1u32);
        launch!(self, self.k.sum_groups, grid(FAN, 1), "msm_sum_groups"; parts, fan_p, p, one, fan);
        launch!(self, self.k.sum_groups, grid(1, 1), "msm_sum_groups"; fan_p, sum, fan, one, one);
        if split.others == 0 {
            // Only the ones: combine one "window" holding their sum.
            let (c, w) = (1u32, 1u32);
            let (zero, out) = (0u64, ptr(&self.out, &self.stream));
            launch!(self, self.k.combine, grid(1, 1), "msm_combine"; sum, w, c, zero, out);
            let bytes = self.stream.clone_dtoh(&*self.out).ctx("cuMemcpyDtoH(result)")?;
            check_stream(&self.stream)?;
            return Ok(bytes.chunks_exact(8).map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes"))).collect());
        }
        let plan = self.plan(split.others);
        let tail = ptr(&self.tail_scalars, &self.stream);
        self.sort(&plan, tail, oi_others(self))?;
        self.reduce(&plan, bases, sum)
    }

    /// Σ scalars[i]·bases[i] in G1 through a split: batch sum of the bases whose scalar is 1
    /// plus the MSM of the compacted tail (bases gathered by index, never copied).
    pub fn msm_g1_split(&mut self, bases: &GpuBases, split: &GpuSplit) -> Result<G1Projective, MsmError> {
        self.check_bases(bases, Curve::G1)?;
        Ok(g1_from_words(&self.split_raw(bases, split)?))
    }

    /// The G2 form of [`Self::msm_g1_split`].
    pub fn msm_g2_split(&mut self, bases: &GpuBases, split: &GpuSplit) -> Result<G2Projective, MsmError> {
        self.check_bases(bases, Curve::G2)?;
        Ok(g2_from_words(&self.split_raw(bases, split)?))
    }
}

fn oi_others(ctx: &MsmContext) -> u64 {
    ptr(&ctx.others_idx, &ctx.stream)
}

fn fp(w: &[u64]) -> blst::blst_fp {
    blst::blst_fp { l: w.try_into().expect("6 words") }
}

fn g1_from_words(w: &[u64]) -> G1Projective {
    crate::cpu::g1_from_blst(blst::blst_p1 { x: fp(&w[0..6]), y: fp(&w[6..12]), z: fp(&w[12..18]) })
}

fn g2_from_words(w: &[u64]) -> G2Projective {
    let f2 = |o: usize| blst::blst_fp2 { fp: [fp(&w[o..o + 6]), fp(&w[o + 6..o + 12])] };
    crate::cpu::g2_from_blst(blst::blst_p2 { x: f2(0), y: f2(12), z: f2(24) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_size_grows_with_n_and_plans_fit_scratch() {
        let mut last = 0;
        for log in 0..=27 {
            let n = 1usize << log;
            let c = window_bits(n);
            assert!(c >= last, "window size shrank at 2^{log}: {c} < {last}");
            assert!((MIN_C..=MAX_C).contains(&c));
            last = c;
            let cap = Sizes::for_capacity(n);
            // Every smaller call must fit the capacity's buffers.
            for m in [1, n / 3, n / 2, n.saturating_sub(1), n] {
                let m = m.max(1);
                let p = Plan::with_c(m, window_bits(m).min(c));
                assert_eq!(cap.max(Sizes::of_plan(&p)), cap, "plan for {m} exceeds capacity {n}");
                assert!(p.windows * p.c as usize >= 256);
                assert!(p.chunks * p.chunk_len >= m);
                assert!(p.segments * p.segment_len >= p.buckets);
            }
        }
        assert!(scratch_bytes(1 << 20, Curve::G2) > scratch_bytes(1 << 20, Curve::G1));
    }

    /// `for_capacity` equals the maximum over every call size (brute force for small n).
    #[test]
    fn capacity_is_exact_max_over_all_call_sizes() {
        for n in [1usize, 2, 3, 31, 100, 1000, 4097, 20_000] {
            let brute = (1..=n).map(|m| Sizes::of_plan(&Plan::new(m))).fold(Sizes::default(), Sizes::max);
            assert_eq!(Sizes::for_capacity(n), brute, "capacity {n}");
        }
    }

    /// The sorted lists dominate: a 2^26 G1 context holds less than twice the sorted
    /// entries plus the scalar buffers of its own top plan (it once held 37.7 GiB).
    #[test]
    fn scratch_is_close_to_the_top_plan() {
        for log in [16u32, 20, 24, 26] {
            let n = 1usize << log;
            let top = Sizes::of_plan(&Plan::new(n)).bytes(Curve::G1);
            let cap = scratch_bytes(n, Curve::G1);
            println!("2^{log}: {:?}", Plan::new(n));
            println!(
                "2^{log}: G1 scratch {:.1} MiB (top plan {:.1} MiB)",
                cap as f64 / 1048576.0,
                top as f64 / 1048576.0
            );
            assert!(cap >= top && cap <= 2 * top, "2^{log}: scratch {cap} B vs top plan {top} B");
        }
    }
}
