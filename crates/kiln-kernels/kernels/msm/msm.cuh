// Pippenger MSM over BLS12-381 G1/G2, written once over a field table F (FpOps / Fp2Ops).
//
// Pipeline for one MSM of n scalars (all on one stream, no host round trip in between):
//   1. msm_histogram: scalars out of Montgomery form, signed c-bit digits d in [-2^(c-1), 2^(c-1)],
//      bucket |d|-1 per window; count points per (window, bucket). Zero digits are dropped.
//   2. msm_scan: exclusive scan per window -> offsets (and a copy as scatter cursors).
//   3. msm_scatter: each (window, point) takes a slot in its bucket's range: a counting sort
//      of (bucket, point) pairs with exact scratch (n entries per window).
//   4. msm_accumulate: the sorted list of a window is cut into fixed chunks of S entries, one
//      thread per chunk (load balance: a heavy bucket is split over many threads). Mixed XYZZ
//      additions. A bucket wholly inside one chunk is written directly; the partial sums of
//      buckets crossing chunk edges go to head/tail slots.
//   5. msm_join_heads (⌈log2(chunks)⌉ launches, one a level): the head partials of each bucket
//      are summed as a tree over the chunk slots, into the bucket's first head.
//   6. msm_bucket_fixup: one thread per bucket joins its tail and first head (or writes zero).
//   7. msm_bucket_reduce: Σ (j+1)·B_j per window by running sums over segments of L buckets.
//   8. msm_sum_groups (twice) + msm_combine: per-window sums, then Horner over windows.
#pragma once
#include "curve/curve.cuh"
#include "field/fr.cuh"

#define MSM_NONE 0xffffffffu
#define MSM_SIGN 0x80000000u

namespace kiln_msm {

// The curve operations, compiled once per curve and called (not inlined) from every kernel but
// the accumulate loop (which inlines its mixed addition, see accumulate): keeps the kernels
// small enough for nvcc to build in reasonable time, at little cost next to the ~10 Montgomery
// products of each call in these colder kernels.
template <class F>
__device__ __noinline__ void madd(xyzz_t<F>& acc, const affine_t<F>& p) { kiln_curve::xyzz_add_affine(acc, p); }
template <class F>
__device__ __noinline__ void add(xyzz_t<F>& acc, const xyzz_t<F>& p) { kiln_curve::xyzz_add(acc, p); }
template <class F>
__device__ __noinline__ void dbl(xyzz_t<F>& acc) { kiln_curve::xyzz_dbl(acc); }

// Canonical little-endian limbs of scalar i.
KILN_DEV fr_t canonical(const fr_t* scalars, uint32_t i) { return fr_from_mont(scalars[i]); }

// c-bit window w of k (bits [w*c, w*c + c)), c <= 31.
KILN_DEV uint32_t window_bits(const fr_t& k, uint32_t w, uint32_t c) {
    uint32_t bit = w * c;
    if (bit >= 256) return 0;
    uint32_t limb = bit / 32, off = bit % 32;
    uint64_t v = k.limb[limb];
    if (limb + 1 < 8) v |= (uint64_t)k.limb[limb + 1] << 32;
    return (uint32_t)(v >> off) & ((1u << c) - 1);
}

// One step of the signed recoding of window bits: v = bits + carry in; if v > 2^(c-1) the digit
// is v - 2^c and the carry out 1, else the digit is v and the carry out 0. Calls f(bucket,
// negative) for a non-zero digit (bucket |d| - 1).
template <class Fn>
KILN_DEV void signed_digit(uint32_t v, uint32_t c, uint32_t& carry, Fn f) {
    const uint32_t half = 1u << (c - 1);
    carry = v > half ? 1 : 0;
    if (v > half) {
        uint32_t mag = (1u << c) - v;  // |d| in [0, 2^(c-1)); 0 when v = 2^c (bits all ones + carry)
        if (mag != 0) f(mag - 1, true);
    } else if (v != 0) {
        f(v - 1, false);
    }
}

// Calls f(w, bucket, negative) for every non-zero signed digit of scalar k.
// W * c >= 256 > 255 bits guarantees the top window never carries out.
template <class Fn>
KILN_DEV void for_each_digit(const fr_t& k, uint32_t c, uint32_t windows, Fn f) {
    uint32_t carry = 0;
    for (uint32_t w = 0; w < windows; w++) {
        signed_digit(window_bits(k, w, c) + carry, c, carry, [&](uint32_t b, bool neg) { f(w, b, neg); });
    }
}

// The signed digit of window w of k alone (the digit for_each_digit gives for w): calls
// f(bucket, negative) when it is non-zero. The carry into w comes from running the recoding
// over the windows below (a few integer operations each), so that one thread can take one
// window of one scalar.
template <class Fn>
KILN_DEV void window_digit(const fr_t& k, uint32_t c, uint32_t w, Fn f) {
    uint32_t carry = 0;
    for (uint32_t j = 0; j < w; j++) signed_digit(window_bits(k, j, c) + carry, c, carry, [](uint32_t, bool) {});
    signed_digit(window_bits(k, w, c) + carry, c, carry, f);
}

// The counting sort's histogram: counts[w*nb + b] += 1 for every non-zero digit of every
// scalar, one thread per scalar.
KILN_DEV void histogram(const fr_t* scalars, uint32_t n, uint32_t c, uint32_t windows, uint32_t* counts) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const uint32_t nb = 1u << (c - 1);
    fr_t k = canonical(scalars, i);
    for_each_digit(k, c, windows, [&](uint32_t w, uint32_t b, bool) { atomicAdd(&counts[(size_t)w * nb + b], 1u); });
}

// The counting sort's scatter, window by window: one thread per (scalar, window), blockIdx.y
// the window. Blocks start in blockIdx order, x first, so the GPU works through the windows
// about one at a time, and the cursors and partly written 32-byte sectors of one window's
// 2^(c-1) buckets can stay in L2; those of all windows at once (13 × 2^19 at 2^24) do not.
// (The histogram stays one thread per scalar: its atomics gain nothing from the order, and one
// thread per window would take each scalar out of Montgomery form once per window.)
//
// sorted[w*n + slot] = point (| MSM_SIGN for a negative digit), slot taken from the bucket's
// cursor; map (nullable) maps scalar i to its base index (the split path's compacted tail).
KILN_DEV void scatter_by_window(const fr_t* scalars, const uint32_t* map, uint32_t n, uint32_t c, uint32_t windows,
                                uint32_t* cursor, uint32_t* sorted) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t w = blockIdx.y;
    if (i >= n || w >= windows) return;
    const uint32_t nb = 1u << (c - 1);
    const uint32_t point = map ? map[i] : i;
    fr_t k = canonical(scalars, i);
    window_digit(k, c, w, [&](uint32_t b, bool neg) {
        uint32_t slot = atomicAdd(&cursor[(size_t)w * nb + b], 1u);
        sorted[(size_t)w * n + slot] = point | (neg ? MSM_SIGN : 0u);
    });
}

// Largest b in [0, nb) with off[b] <= pos (off is non-decreasing, off[0] = 0 <= pos), skipping
// empty buckets: the bucket whose range holds pos.
KILN_DEV uint32_t bucket_of(const uint32_t* off, uint32_t nb, uint32_t pos) {
    uint32_t lo = 0, hi = nb;  // answer in [lo, hi)
    while (hi - lo > 1) {
        uint32_t mid = (lo + hi) / 2;
        if (off[mid] <= pos) lo = mid; else hi = mid;
    }
    return lo;
}

// The base of a sorted entry, negated when the entry carries MSM_SIGN (neg keeps infinity 0).
template <class F>
KILN_DEV affine_t<F> signed_base(const affine_t<F>* bases, uint32_t entry) {
    affine_t<F> p = bases[entry & ~MSM_SIGN];
    if (entry & MSM_SIGN) p.y = F::neg(p.y);
    return p;
}


// One thread per chunk [t*S, t*S + S) of window w's sorted list. One flat loop over the
// chunk's entries, one mixed addition each; at a bucket edge the finished sum is stored and
// the accumulator restarts. (A loop per bucket inside a loop over buckets made each warp wait,
// at every bucket, for its thread with the longest bucket: with ~32 entries per bucket that
// idled about a quarter of the lanes.) The next base is loaded while the current one is added
// (its DRAM latency hides behind ~10 products); the next non-empty bucket is found by walking
// the offsets forward (one cached read per bucket) instead of a binary search.
//
// Where a bucket's sum goes: started before the chunk -> head (the fix-up adds it to the
// chunks before), else ends after the chunk -> tail, else complete -> buckets.
//
// The mixed addition is inlined here, not called: a call passes the accumulator and the base
// through local memory on every addition (G2's field products are calls instead, see g2.cu).
template <class F>
KILN_DEV void accumulate(const affine_t<F>* bases, const uint32_t* sorted, const uint32_t* offsets, uint32_t n,
                         uint32_t nb, uint32_t windows, uint32_t S, uint32_t chunks, xyzz_t<F>* buckets,
                         xyzz_t<F>* head, xyzz_t<F>* tail, uint32_t* head_b, uint32_t* tail_b) {
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t w = blockIdx.y;
    if (t >= chunks || w >= windows) return;
    const uint32_t* off = offsets + (size_t)w * (nb + 1);
    const uint32_t* list = sorted + (size_t)w * n;
    size_t slot = (size_t)w * chunks + t;
    uint32_t total = off[nb];
    uint32_t start = t * S;
    uint32_t end = min(start + S, total);
    head_b[slot] = MSM_NONE;
    tail_b[slot] = MSM_NONE;
    if (start >= total) return;
    uint32_t b = bucket_of(off, nb, start);
    uint32_t be = off[b + 1];
    bool started_before = off[b] < start;  // only the chunk's first bucket can be
    affine_t<F> next = signed_base<F>(bases, list[start]);
    xyzz_t<F> acc = kiln_curve::xyzz_zero<F>();
#pragma unroll 1
    for (uint32_t j = start; j < end; j++) {
        if (j == be) {
            // Bucket b ends inside the chunk (be = j < end): head or complete.
            if (started_before) {
                head[slot] = acc;
                head_b[slot] = b;
            } else {
                buckets[(size_t)w * nb + b] = acc;
            }
            started_before = false;
            acc = kiln_curve::xyzz_zero<F>();
            // The next bucket holding j: the last b' > b with off[b'] <= j (off[nb] > j
            // bounds the walk).
            b++;
            while (off[b + 1] <= j) b++;
            be = off[b + 1];
        }
        const affine_t<F> p = next;
        if (j + 1 < end) next = signed_base<F>(bases, list[j + 1]);
        kiln_curve::xyzz_add_affine(acc, p);
    }
    if (started_before) {
        head[slot] = acc;
        head_b[slot] = b;
    } else if (be > end) {
        tail[slot] = acc;
        tail_b[slot] = b;
    } else {
        buckets[(size_t)w * nb + b] = acc;
    }
}

// Level `level` of the tree that sums each bucket's head partials, one thread per chunk slot.
// A bucket b spanning chunks t0 < t1 has its tail in slot t0 and a head in every slot
// t0 + 1 ..= t1 (each of those chunks starts inside b), so its heads are one run of slots with
// head_b = b, the run's first slot computable from off[b]. At level L the head at position p
// of the run, p a multiple of 2^(L+1), adds in the head 2^L slots further on when that one is
// still in the run. By induction, after levels 0..L position p holds the sum of positions
// p .. p + 2^(L+1) - 1 of the run; a run is at most chunks - 1 long, so after ⌈log2(chunks)⌉
// levels its first head holds the whole run. The head a thread reads is at an odd multiple
// of 2^L, which no thread of the same level writes. Why a tree: one thread a bucket adding
// its heads in turn leaves a window with a few heavy buckets (the top window of signed
// digits, ~1300 heads each) to a few threads while the rest of the GPU idles.
template <class F>
KILN_DEV void join_heads(const uint32_t* offsets, uint32_t nb, uint32_t windows, uint32_t S, uint32_t chunks,
                         uint32_t level, xyzz_t<F>* head, const uint32_t* head_b) {
    uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t w = blockIdx.y;
    if (k >= chunks || w >= windows) return;
    const size_t base = (size_t)w * chunks;
    uint32_t b = head_b[base + k];
    if (b == MSM_NONE) return;
    uint32_t first = offsets[(size_t)w * (nb + 1) + b] / S + 1;
    uint64_t pos_in_run = k - first;
    if (pos_in_run & ((2ull << level) - 1)) return;
    uint64_t partner = (uint64_t)k + (1ull << level);
    if (partner >= chunks || head_b[base + partner] != b) return;
    xyzz_t<F> acc = head[base + k];
    add<F>(acc, head[base + partner]);
    head[base + k] = acc;
}

// The bucket sums msm_accumulate left in partials: tail + first head, after msm_join_heads
// has summed the heads.
template <class F>
KILN_DEV void bucket_fixup(const uint32_t* offsets, uint32_t nb, uint32_t windows, uint32_t S, uint32_t chunks,
                           xyzz_t<F>* buckets, const xyzz_t<F>* head, const xyzz_t<F>* tail) {
    uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t w = blockIdx.y;
    if (b >= nb || w >= windows) return;
    const uint32_t* off = offsets + (size_t)w * (nb + 1);
    uint32_t s = off[b], e = off[b + 1];
    xyzz_t<F>* out = buckets + (size_t)w * nb + b;
    if (s == e) {
        *out = kiln_curve::xyzz_zero<F>();
        return;
    }
    uint32_t t0 = s / S, t1 = (e - 1) / S;
    if (t0 == t1) return;  // written by msm_accumulate
    const size_t base = (size_t)w * chunks;
    xyzz_t<F> acc = tail[base + t0];
    add<F>(acc, head[base + t0 + 1]);
    *out = acc;
}

// Segment g of L buckets of window w: Σ_{j in seg} (j + 1)·B_j.
template <class F>
KILN_DEV void bucket_reduce(const xyzz_t<F>* buckets, uint32_t nb, uint32_t windows, uint32_t L, uint32_t segs,
                            xyzz_t<F>* out) {
    uint32_t g = blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t w = blockIdx.y;
    if (g >= segs || w >= windows) return;
    uint32_t lo = g * L, hi = min(lo + L, nb);
    const xyzz_t<F>* B = buckets + (size_t)w * nb;
    xyzz_t<F> running = kiln_curve::xyzz_zero<F>();
    xyzz_t<F> acc = kiln_curve::xyzz_zero<F>();
    for (uint32_t j = hi; j > lo; j--) {
        add<F>(running, B[j - 1]);
        add<F>(acc, running);
    }
    // acc = Σ (j - lo + 1)·B_j; add lo·running by double-and-add from lo's top set bit (a
    // doubling costs ~10 products even of zero, so the 31 - log2(lo) leading ones are skipped).
    if (lo != 0) {
        xyzz_t<F> m = running;
        for (int bit = 30 - __clz(lo); bit >= 0; bit--) {
            dbl<F>(m);
            if ((lo >> bit) & 1) add<F>(m, running);
        }
        add<F>(acc, m);
    }
    out[(size_t)w * segs + g] = acc;
}

// out[g*fan + j] = Σ_{k < len, k % fan == j} in[g*len + k].
template <class F>
KILN_DEV void sum_groups(const xyzz_t<F>* in, xyzz_t<F>* out, uint32_t len, uint32_t groups, uint32_t fan) {
    uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t g = blockIdx.y;
    if (j >= fan || g >= groups) return;
    xyzz_t<F> acc = kiln_curve::xyzz_zero<F>();
    for (uint32_t k = j; k < len; k += fan) add<F>(acc, in[(size_t)g * len + k]);
    out[(size_t)g * fan + j] = acc;
}

// One thread: Σ_w 2^(c·w)·window[w] (+ extra if non-null), to Jacobian.
template <class F>
KILN_DEV void combine(const xyzz_t<F>* window_sums, uint32_t windows, uint32_t c, const xyzz_t<F>* extra,
                      jacobian_t<F>* out) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    xyzz_t<F> acc = window_sums[windows - 1];
    for (int w = (int)windows - 2; w >= 0; w--) {
        for (uint32_t i = 0; i < c; i++) dbl<F>(acc);
        add<F>(acc, window_sums[w]);
    }
    if (extra != nullptr) add<F>(acc, *extra);
    *out = kiln_curve::xyzz_to_jacobian(acc);
}

// partial[p] = Σ_{k ≡ p mod P, k < *count} bases[idx[k]]. The mixed addition is inlined, as in
// accumulate: a call passes the accumulator and the base through local memory every time.
template <class F>
KILN_DEV void sum_indexed(const affine_t<F>* bases, const uint32_t* idx, const uint32_t* count, uint32_t P,
                          xyzz_t<F>* partial) {
    uint32_t p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= P) return;
    uint32_t cnt = *count;
    xyzz_t<F> acc = kiln_curve::xyzz_zero<F>();
#pragma unroll 1
    for (uint32_t k = p; k < cnt; k += P) kiln_curve::xyzz_add_affine(acc, bases[idx[k]]);
    partial[p] = acc;
}

// In place: buf[j] = Σ_{k < len, k ≡ j mod fan} buf[k] for j < fan, one thread each. Thread j
// alone reads the slots ≡ j mod fan, buf[j] among them (first), so its write races with no
// read. One level of a tree whose levels the host launches (fan-in len / fan each): every
// level is short, where one thread summing many partials in turn idles the rest of the GPU.
template <class F>
KILN_DEV void fold(xyzz_t<F>* buf, uint32_t len, uint32_t fan) {
    uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= fan || j >= len) return;
    xyzz_t<F> acc = buf[j];
    for (uint32_t k = j + fan; k < len; k += fan) add<F>(acc, buf[k]);
    buf[j] = acc;
}

}  // namespace kiln_msm
