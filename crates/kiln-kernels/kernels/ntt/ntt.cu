// NTT over Fr on the GPU, in place on device memory (module "ntt").
//
// A transform of 2^log_n points is a sequence of passes over global memory. Each pass runs
// `ks` consecutive butterfly stages [L, L + ks) in shared memory: a block loads the 2^ks
// points whose indices differ only in bits [L, L + ks), for 2^log_g consecutive values of
// the low bits (so a warp reads runs of 2^log_g consecutive 32-byte elements), does the
// stages, and writes them back. With up to 9 stages a pass, 2^27 is 3 passes.
//
// Inside a pass the stages go in rounds of RL stages, radix 2^RL: a thread loads the 2^RL
// points of one group from shared memory into registers, does the round's butterflies there
// (12 for radix 8) and stores them back, so shared memory is read and written once per round
// and a block synchronises once per round (a radix-2 stage through shared memory costs 5
// accesses and a barrier per butterfly). Radix 8 (RL = 3: 8 points in registers, 16 warps per
// SM) serves passes of 9 stages, radix 4 (RL = 2: 28 warps per SM, more rounds) the others:
// the passes are bound by the 32-bit multiplier pipe (ncu, 2^24 radix 4: fmaheavy busy 82% of
// the cycles, "math pipe throttle" the first stall reason, the ALU 50%), whose latency more
// warps hide, so they pay until the extra rounds of a 9-stage pass outweigh them (see
// plan::passes). The pass loads all its points into shared memory first and writes them out
// last, in loops of their own: reading global memory straight into the first round's registers
// (and writing from the last round's) saves a barrier and a shared-memory round trip but
// measured 3% slower at 2^24 and 20% at 2^27 on the H200 (more code: every round in a variant
// that touches global memory).
//
// Two orders, chosen so that the H step needs no bit reversal between transforms:
// - DIF (Gentleman-Sande, stages from high to low): natural order in, bit-reversed out;
// - DIT (Cooley-Tukey, stages from low to high): bit-reversed in, natural order out.
//
// Twiddles: the butterfly of stage s at offset r in its 2^(s+1)-block uses ω_{2^(s+1)}^r =
// ω^(r·2^(log_n-1-s)), an exponent x below n/2, read from one resident table of ω^x for all
// x <= n/2 (filled once per domain by ntt_twiddles). So a butterfly costs one product: no
// product builds twiddles on the fly. The inverse transform's ω^-x = -ω^(n/2-x) comes from the
// same table, the sign folded into the butterfly (its add and subtract swap); ω^(n/2) = -1 is
// in the table so that x = 0 takes the same path (docs/PERF.md, NTT).
//
// A pass may also scale every element by c·x^k on load (first pass) or on store (last pass),
// where k is the element's index or its bit reversal: that is how the coset powers g^i and
// the 1/n of the inverse are fused into the transform instead of costing a pass each.
// All tables live in one buffer `tw`; arguments are offsets into it.
#include <cstdint>

#include "field/fr.cuh"

#define NTT_MAX_LOG_POINTS 10  // points per block: 2^10 x 32 B = 32 KiB of shared memory
#define NTT_PASS_THREADS 128    // threads per block at most: 2^RL points each

// Scale modes.
#define NTT_SCALE_NONE 0u
#define NTT_SCALE_CONST 1u   // multiply by tw[hi]
#define NTT_SCALE_POWERS 2u  // multiply by tw[hi + (k >> lo_bits)] * tw[lo + (k & mask)]

static __device__ __forceinline__ fr_t ld(const fr_t* p) {
    const uint4* q = reinterpret_cast<const uint4*>(p);
    uint4 x = q[0], y = q[1];
    fr_t r;
    r.limb[0] = x.x; r.limb[1] = x.y; r.limb[2] = x.z; r.limb[3] = x.w;
    r.limb[4] = y.x; r.limb[5] = y.y; r.limb[6] = y.z; r.limb[7] = y.w;
    return r;
}

static __device__ __forceinline__ void st(fr_t* p, const fr_t& v) {
    uint4* q = reinterpret_cast<uint4*>(p);
    q[0] = make_uint4(v.limb[0], v.limb[1], v.limb[2], v.limb[3]);
    q[1] = make_uint4(v.limb[4], v.limb[5], v.limb[6], v.limb[7]);
}

// Shared-memory layout. An element is two 16-byte units (2e, 2e + 1), accessed as uint4
// (two LDS.128/STS.128 per element instead of four 64-bit ones), and unit u lives at
// u ^ ((u >> 3 ^ u >> 4 ^ u >> 5) & 7). Without this XOR swizzle, 8 threads reading elements
// at a power-of-two stride hit only a few of the 8 16-byte bank groups (up to 8-way
// conflicts). The XOR only permutes units within aligned groups of 8, so an array of a
// multiple of 8 units stays in bounds. The shifts were searched for with a bank model: these
// make every round of both radices, and the load and store loops, conflict-free for every pass
// plan (u >> 3 ^ u >> 6 ^ u >> 9 did that for radix-8 rounds only). kiln-ntt's host emulation
// tests (src/host_emulation.rs) check it on the accesses this file makes.
static __device__ __forceinline__ uint32_t swizzle(uint32_t u) { return u ^ (((u >> 3) ^ (u >> 4) ^ (u >> 5)) & 7u); }

static __device__ __forceinline__ fr_t sh_ld(const uint4* s, uint32_t e) {
    const uint4 x = s[swizzle(2 * e)], y = s[swizzle(2 * e + 1)];
    fr_t r;
    r.limb[0] = x.x; r.limb[1] = x.y; r.limb[2] = x.z; r.limb[3] = x.w;
    r.limb[4] = y.x; r.limb[5] = y.y; r.limb[6] = y.z; r.limb[7] = y.w;
    return r;
}

static __device__ __forceinline__ void sh_st(uint4* s, uint32_t e, const fr_t& v) {
    s[swizzle(2 * e)] = make_uint4(v.limb[0], v.limb[1], v.limb[2], v.limb[3]);
    s[swizzle(2 * e + 1)] = make_uint4(v.limb[4], v.limb[5], v.limb[6], v.limb[7]);
}

static __device__ __forceinline__ uint32_t bitrev(uint32_t i, uint32_t log_n) {
    return log_n == 0 ? 0 : (__brev(i) >> (32 - log_n));
}

// x^k (times the constant folded into the hi table) for the scale modes above.
static __device__ __forceinline__ fr_t scale_factor(const fr_t* tw, uint32_t mode, uint32_t lo, uint32_t hi,
                                                    uint32_t lo_bits, uint32_t k) {
    if (mode == NTT_SCALE_CONST) return ld(tw + hi);
    return fr_mul(ld(tw + hi + (k >> lo_bits)), ld(tw + lo + (k & ((1u << lo_bits) - 1))));
}

// The kernel's arguments and the block's place, bundled for the device functions.
struct PassArgs {
    const fr_t* tw;
    const fr_t* roots;  // ω^x for x <= n/2
    uint32_t half_n, log_n, L, log_g, lo_base, hi_base;
    uint32_t scale_at, scale_mode, s_lo, s_hi, s_lo_bits, scale_bitrev;
};

// Global index of the block's local point e = j·2^log_g + g: hi_base + j·2^L + lo_base + g.
static __device__ __forceinline__ uint32_t global_index(const PassArgs& p, uint32_t e) {
    return p.hi_base + ((e >> p.log_g) << p.L) + p.lo_base + (e & ((1u << p.log_g) - 1));
}

// v times the pass's scale factor for the point at global index idx. A call, not inlined: its
// two products would otherwise sit in the load and store loops of every pass, while only the
// first or last pass of some transforms scales.
static __device__ __noinline__ fr_t scale_point(const PassArgs& p, uint32_t idx, fr_t v) {
    const uint32_t k = p.scale_bitrev ? bitrev(idx, p.log_n) : idx;
    return fr_mul(v, scale_factor(p.tw, p.scale_mode, p.s_lo, p.s_hi, p.s_lo_bits, k));
}

// v scaled as the pass scales at `at` (1 = load, 2 = store), for the point at global index idx.
static __device__ __forceinline__ fr_t scaled(const PassArgs& p, uint32_t at, uint32_t idx, const fr_t& v) {
    if (p.scale_at != at || p.scale_mode == NTT_SCALE_NONE) return v;
    return scale_point(p, idx, v);
}

// The twiddle of a butterfly at offset r (< 2^t) of local stage t, for low index lo (< 2^L):
// ω^x with x = (r·2^L + lo)·2^(log_n-1-L-t) < n/2, or for the inverse -ω^-x = ω^(n/2-x), whose
// sign the butterfly folds in: the table holds ω^(n/2) = -1 too (ω^-0 = 1 = -ω^(n/2)), so every
// inverse butterfly folds it and none decides anything at run time.
template <bool INV>
static __device__ __forceinline__ fr_t twiddle(const PassArgs& p, uint32_t r, uint32_t lo, uint32_t t) {
    const uint32_t x = ((r << p.L) | lo) << (p.log_n - 1 - p.L - t);
    return ld(p.roots + (INV ? p.half_n - x : x));
}

// One butterfly with twiddle w (forward) or -w (INV: w from `twiddle` is the negated root).
// DIT: (x, y) -> (x + w·y, x - w·y). DIF: (x, y) -> (x + y, (x - y)·w).
template <bool DIT, bool INV>
static __device__ __forceinline__ void butterfly(fr_t& x, fr_t& y, const fr_t& w) {
    if (DIT) {
        const fr_t u = fr_mul(y, w);
        const fr_t s = fr_add(x, u), d = fr_sub(x, u);
        x = INV ? d : s;
        y = INV ? s : d;
    } else {
        const fr_t s = fr_add(x, y);
        const fr_t d = INV ? fr_sub(y, x) : fr_sub(x, y);
        x = s;
        y = fr_mul(d, w);
    }
}

// The butterfly with twiddle 1, the same in both orders: (x, y) -> (x + y, x - y).
static __device__ __forceinline__ void unit_butterfly(fr_t& x, fr_t& y) {
    const fr_t s = fr_add(x, y);
    y = fr_sub(x, y);
    x = s;
}

// One round: local stages [t_lo, t_lo + RK) of the block's P points, in registers.
// A group is the 2^RK points whose local index e = j·2^log_g + g differs only in j's bits
// [t_lo, t_lo + RK); group q leaves those bits out of e.
//
// UNIT_M0: the round holds the transform's stages 0..RK-1 (pass L = 0, so lo = 0, and t_lo = 0,
// so r_base = 0), where the butterflies at offset m = 0 have twiddle ω^0 = 1 and need no
// product: 7 of a radix-8 round's 12, 3 of a radix-4 round's 4 (~7% of a 2^24 transform's
// products; docs/PERF.md, NTT).
template <int RK, bool DIT, bool UNIT_M0, bool INV>
static __device__ __forceinline__ void radix_round(uint4* sh, const PassArgs& p, uint32_t P, uint32_t t_lo) {
    constexpr uint32_t R = 1u << RK;
    const uint32_t p0 = t_lo + p.log_g;  // bit of e where the group's bits start
    for (uint32_t q = threadIdx.x; q < (P >> RK); q += blockDim.x) {
        const uint32_t base = ((q >> p0) << (p0 + RK)) | (q & ((1u << p0) - 1));
        fr_t v[R];
#pragma unroll
        for (uint32_t k = 0; k < R; k++) v[k] = sh_ld(sh, base + (k << p0));
        const uint32_t lo = p.lo_base | (base & ((1u << p.log_g) - 1));
        const uint32_t r_base = (base >> p.log_g) & ((1u << t_lo) - 1);
#pragma unroll
        for (uint32_t s = 0; s < RK; s++) {
            const uint32_t b = DIT ? s : RK - 1 - s;  // the stage's bit in k
            // Point k's offset in its 2^(t+1)-block is r_base + (k mod 2^b)·2^t_lo: 2^b twiddles.
#pragma unroll
            for (uint32_t m = 0; m < (1u << b); m++) {
                if (m == 0 && UNIT_M0) {
#pragma unroll
                    for (uint32_t k0 = 0; k0 < R; k0 += 2u << b) unit_butterfly(v[k0], v[k0 + (1u << b)]);
                    continue;
                }
                const fr_t w = twiddle<INV>(p, r_base | (m << t_lo), lo, t_lo + b);
#pragma unroll
                for (uint32_t k0 = m; k0 < R; k0 += 2u << b) butterfly<DIT, INV>(v[k0], v[k0 + (1u << b)], w);
            }
        }
#pragma unroll
        for (uint32_t k = 0; k < R; k++) sh_st(sh, base + (k << p0), v[k]);
    }
}

// The stages [0, ks) of a pass in rounds of RL stages (radix 2^RL) from stage 0 up, the top
// round holding what is left (1 to RL stages); DIF runs them top down, DIT bottom up. INV: the
// inverse transform (ω^-1), a template parameter so that the forward's butterflies carry no
// sign handling (docs/PERF.md, NTT) and, since the
// forward and inverse are kernels of their own, neither pays the other's registers.
template <bool DIT, int RL, bool INV>
static __device__ __forceinline__ void rounds(uint4* sh, const PassArgs& p, uint32_t P, uint32_t ks) {
    const uint32_t count = (ks + RL - 1) / RL;
    for (uint32_t i = 0; i < count; i++) {
        const uint32_t r = DIT ? i : count - 1 - i;
        const uint32_t t_lo = r * RL;
        const uint32_t rk = min(ks - t_lo, (uint32_t)RL);
        __syncthreads();  // the load or the previous round has all points in shared memory
        if (p.L == 0 && t_lo == 0) {  // the transform's first stages: see radix_round
            if (RL == 3 && rk == 3) {
                radix_round<3, DIT, true, INV>(sh, p, P, t_lo);
            } else if (rk == 2) {
                radix_round<2, DIT, true, INV>(sh, p, P, t_lo);
            } else {
                radix_round<1, DIT, true, INV>(sh, p, P, t_lo);
            }
        } else if (RL == 3 && rk == 3) {
            radix_round<3, DIT, false, INV>(sh, p, P, t_lo);
        } else if (rk == 2) {
            radix_round<2, DIT, false, INV>(sh, p, P, t_lo);
        } else {
            radix_round<1, DIT, false, INV>(sh, p, P, t_lo);
        }
    }
}

// One pass: stages [L, L + ks) of a DIF (stages descending) or DIT (ascending) transform of
// 2^log_n points, for 2^log_g consecutive low indices per block, in rounds of RL stages.
// Requires ks >= 1, ks + log_g <= NTT_MAX_LOG_POINTS, log_g <= L, L + ks <= log_n.
// blockDim.x = max(2^(ks + log_g - RL), 1) <= NTT_PASS_THREADS; gridDim.x = 2^(log_n - ks - log_g);
// dynamic shared memory 2^(ks + log_g) x 32 bytes. `roots` is the offset of ω^x (x <= n/2) in
// tw; INV selects ω^-1.
// Scale: applied to each element on load (scale_at == 1) or on store (scale_at == 2), with
// k = its global index, or the bit reversal of it when scale_bitrev != 0.
template <bool DIT, int RL, bool INV>
static __device__ __forceinline__ void pass(fr_t* a, const fr_t* tw, uint32_t log_n, uint32_t L, uint32_t ks,
                                            uint32_t log_g, uint32_t roots, uint32_t scale_at, uint32_t scale_mode,
                                            uint32_t s_lo, uint32_t s_hi, uint32_t s_lo_bits, uint32_t scale_bitrev) {
    // Two 16-byte units per element, swizzled (sh_ld/sh_st).
    extern __shared__ uint4 sh[];

    // Block -> (hi, lo_base): hi selects bits above L + ks, lo_base the run of 2^log_g low indices.
    const uint32_t lo_blocks_log = L - log_g;
    const uint32_t lo_base = (blockIdx.x & ((1u << lo_blocks_log) - 1)) << log_g;
    const uint32_t hi_base = (blockIdx.x >> lo_blocks_log) << (L + ks);
    const PassArgs p{tw,      tw + roots, 1u << (log_n - 1), log_n,      L,    log_g,     lo_base,
                     hi_base, scale_at,   scale_mode,        s_lo,       s_hi, s_lo_bits, scale_bitrev};
    const uint32_t P = 1u << (ks + log_g);
    for (uint32_t e = threadIdx.x; e < P; e += blockDim.x) {
        const uint32_t idx = global_index(p, e);
        sh_st(sh, e, scaled(p, 1u, idx, ld(a + idx)));
    }
    rounds<DIT, RL, INV>(sh, p, P, ks);
    __syncthreads();
    for (uint32_t e = threadIdx.x; e < P; e += blockDim.x) {
        const uint32_t idx = global_index(p, e);
        st(a + idx, scaled(p, 2u, idx, sh_ld(sh, e)));
    }
}

// The pass kernels: ntt_pass_{dif,dit}{8,4}[_inv], by order, round radix and direction (the
// launcher picks one per pass, see plan::passes). Separate kernels rather than run-time flags,
// so each is compiled and register-allocated for its own rounds: one kernel for both orders
// measured 2% slower; one for both directions spilled 40 bytes in the forward radix-4 kernel,
// none apart (docs/PERF.md, NTT).
// Launch bounds: at most 128 threads a block for both (blocks of 1024 points for radix 8, 512
// for radix 4). Radix 8 holds 8 points (64 registers) per thread: 4 blocks per SM (16 warps,
// 128 registers); radix 4 fits 72 registers: 7 blocks (28 warps), more warps to hide the
// products' latency at the cost of more shared-memory rounds; blocks of 4 warps wait less at
// the barrier of each round than blocks of 8 (docs/PERF.md, NTT blocks).
#define NTT_PASS_KERNEL(NAME, DIT, RL, INV, MIN_BLOCKS)                                                         \
    extern "C" __global__ void __launch_bounds__(NTT_PASS_THREADS, MIN_BLOCKS)                                \
        NAME(fr_t* a, const fr_t* tw, uint32_t log_n, uint32_t L, uint32_t ks, uint32_t log_g, uint32_t roots,  \
             uint32_t scale_at, uint32_t scale_mode, uint32_t s_lo, uint32_t s_hi, uint32_t s_lo_bits,          \
             uint32_t scale_bitrev) {                                                                           \
        pass<DIT, RL, INV>(a, tw, log_n, L, ks, log_g, roots, scale_at, scale_mode, s_lo, s_hi, s_lo_bits,      \
                           scale_bitrev);                                                                       \
    }
NTT_PASS_KERNEL(ntt_pass_dif8, false, 3, false, 4)
NTT_PASS_KERNEL(ntt_pass_dit8, true, 3, false, 4)
NTT_PASS_KERNEL(ntt_pass_dif4, false, 2, false, 7)
NTT_PASS_KERNEL(ntt_pass_dit4, true, 2, false, 7)
NTT_PASS_KERNEL(ntt_pass_dif8_inv, false, 3, true, 4)
NTT_PASS_KERNEL(ntt_pass_dit8_inv, true, 3, true, 4)
NTT_PASS_KERNEL(ntt_pass_dif4_inv, false, 2, true, 7)
NTT_PASS_KERNEL(ntt_pass_dit4_inv, true, 2, true, 7)

// tw[roots + x] = ω^x = tw[w_hi + (x >> w_lo_bits)] · tw[w_lo + (x & mask)] for x < half_n, and
// ω^(n/2) = -1 at x = half_n: the table every pass reads its twiddles from, built once per
// domain from two small host tables.
extern "C" __global__ void ntt_twiddles(fr_t* tw, uint32_t roots, uint32_t w_lo, uint32_t w_hi, uint32_t w_lo_bits,
                                        uint32_t half_n) {
    const uint32_t x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x > half_n) return;
    if (x == half_n) {
        st(tw + roots + x, fr_neg(fr_one()));
        return;
    }
    st(tw + roots + x, fr_mul(ld(tw + w_hi + (x >> w_lo_bits)), ld(tw + w_lo + (x & ((1u << w_lo_bits) - 1)))));
}

// In-place bit-reversal permutation of 2^log_n points, in tiles so that every global access
// is a run of 2^b consecutive points (512 bytes for b = 4) instead of a lone 32-byte one.
// b = 4 beats b = 3 (256-byte runs): docs/PERF.md, NTT bit reversal.
//
// Write an index as i = (h, m, l): h its top b bits, l its low b bits, m the log_n - 2b bits
// between. bitrev(i) = (rev(l), rev(m), rev(h)), so the tile T(m) = {(h, m, l): all h, l} of
// 2^2b points maps onto T(rev(m)), point (h, l) to (rev(l), rev(h)). Block m swaps the tiles
// m and rev(m) when m < rev(m), permutes its own tile when m = rev(m), and does nothing when
// m > rev(m) (the pair's other block does it): it loads both tiles (rows of 2^b consecutive
// points) into shared memory, synchronises, and writes each point of both destinations.
// Requires b = min(NTT_BITREV_TILE_LOG, log_n / 2); gridDim.x = 2^(log_n - 2b); blockDim.x =
// NTT_BITREV_THREADS (two 16-byte units per point, one unit per thread and tile).
#define NTT_BITREV_TILE_LOG 4
#define NTT_BITREV_THREADS (2 << (2 * NTT_BITREV_TILE_LOG))
extern "C" __global__ void __launch_bounds__(NTT_BITREV_THREADS)
ntt_bitrev(fr_t* a, uint32_t log_n, uint32_t b) {
    __shared__ uint4 tile[2][NTT_BITREV_THREADS];
    const uint32_t mid = log_n - 2 * b;
    const uint32_t m = blockIdx.x;
    const uint32_t m_rev = bitrev(m, mid);
    if (m > m_rev) return;
    uint4* units = reinterpret_cast<uint4*>(a);
    const uint32_t t = threadIdx.x;
    const uint32_t e = t >> 1, half = t & 1;  // this thread's point (h, l) of a tile and its unit
    const uint32_t h = e >> b, l = e & ((1u << b) - 1);
    const bool active = e < (1u << (2 * b));
    // Unit `half` of point (h, l) of tile mm, in 16-byte units of a.
    auto unit = [&](uint32_t hh, uint32_t mm, uint32_t ll) {
        return 2 * (((hh << (mid + b)) | (mm << b) | ll)) + half;
    };
    if (active) {
        tile[0][t] = units[unit(h, m, l)];
        if (m != m_rev) tile[1][t] = units[unit(h, m_rev, l)];
    }
    __syncthreads();
    if (active) {
        // Destination (h, l) of tile rev(x) takes source (rev(l), rev(h)) of tile x.
        const uint32_t src = 2 * ((bitrev(l, b) << b) | bitrev(h, b)) + half;
        units[unit(h, m_rev, l)] = tile[0][src];
        if (m != m_rev) units[unit(h, m, l)] = tile[1][src];
    }
}

// a[i] = (a[i]·b[i] - c[i]) · tw[z_inv]: the H step's pointwise part, divided by Z on the coset.
extern "C" __global__ void ntt_pointwise(fr_t* a, const fr_t* b, const fr_t* c, const fr_t* tw, uint32_t z_inv,
                                         uint32_t n) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    st(a + i, fr_mul(fr_sub(fr_mul(ld(a + i), ld(b + i)), ld(c + i)), tw[z_inv]));
}

// x[i] = x[i]·y[i]: with a copy of a into c before, forms c = a∘b on the device (the H step of
// a satisfied constraint system, whose c_i = a_i·b_i, then needs no c from the host).
extern "C" __global__ void ntt_mul(fr_t* x, const fr_t* y, uint32_t n) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    st(x + i, fr_mul(ld(x + i), ld(y + i)));
}
