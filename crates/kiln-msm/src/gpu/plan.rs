//! Pippenger plans: the window size for a size, the launch shape, and the exact scratch a
//! context needs (for the VRAM planner).

use super::Curve;

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
pub(crate) const FAN: usize = 64;
/// Threads summing the bases whose scalar is 1 (each about ones / 2^16 mixed additions:
/// ~120 for porep's 7.9 M ones at 2^24; fewer threads left SMs short of warps to switch to).
pub(crate) const ONES_THREADS: usize = 1 << 16;
/// Fan-in of each level of the tree that sums the ones' partials (`msm_fold`).
const ONES_FOLD: usize = 16;

/// The `msm_fold` levels that sum the ones' `ONES_THREADS` partials down to `ONES_FOLD` or
/// fewer, as `(len, fan)`: the last ones are then summed by one `msm_sum_groups` thread.
pub(crate) fn ones_fold_levels() -> impl Iterator<Item = (usize, usize)> {
    std::iter::successors(Some(ONES_THREADS), |&len| Some(len.div_ceil(ONES_FOLD)))
        .take_while(|&len| len > ONES_FOLD)
        .map(|len| (len, len.div_ceil(ONES_FOLD)))
}

/// How many partials the last `msm_fold` level leaves (summed by one thread).
pub(crate) fn ones_fold_rest() -> usize {
    ones_fold_levels().last().map_or(ONES_THREADS, |(_, fan)| fan)
}
/// Smallest window size.
pub(crate) const MIN_C: u32 = 2;
/// Largest window size (2^26 points choose 20; larger sizes are not tested).
pub(crate) const MAX_C: u32 = 20;
/// Mixed-add equivalents per bucket of the reduction: 2 full XYZZ additions (14 products each
/// against 10 for a mixed add) plus the fix-up, the bucket store and reload.
const REDUCE_COST_PER_BUCKET: f64 = 4.0;

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
pub(crate) struct Sizes {
    pub(crate) scalars_u64: usize,
    pub(crate) counts: usize,
    pub(crate) offsets: usize,
    pub(crate) sorted: usize,
    pub(crate) buckets: usize,
    pub(crate) partials: usize,
    pub(crate) segs: usize,
    pub(crate) fan: usize,
    pub(crate) windows: usize,
    // split path
    pub(crate) bits: usize,
    pub(crate) idx: usize,
    pub(crate) tail_scalars_u64: usize,
    pub(crate) ones_partials: usize,
}

impl Sizes {
    pub(crate) fn max(self, o: Sizes) -> Sizes {
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

    pub(crate) fn of_plan(p: &Plan) -> Sizes {
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
    pub(crate) fn for_capacity(n: usize) -> Sizes {
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

    pub(crate) fn bytes(&self, curve: Curve) -> usize {
        let x = curve.xyzz_bytes();
        8 * (self.scalars_u64 + self.tail_scalars_u64)
            + 4 * (self.counts + 2 * self.offsets + self.sorted + 2 * self.partials + 2 * self.bits + 2 * self.idx + 2)
            + x * (self.buckets + 2 * self.partials + self.segs + self.fan + self.windows + self.ones_partials + 1)
            + curve.jacobian_bytes()
    }
}

/// Exact device bytes an [`MsmContext`] for up to `n` points in `curve` allocates beyond its
/// inputs (bases and device scalars), so the VRAM planner can reserve it up front.
pub fn scratch_bytes(n: usize, curve: Curve) -> usize {
    Sizes::for_capacity(n).bytes(curve)
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
