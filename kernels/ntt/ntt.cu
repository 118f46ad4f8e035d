// Radix-2 NTT over Fr on the GPU, in place on device memory (module "ntt_ntt").
//
// A transform of 2^log_n points is a sequence of passes over global memory. Each pass runs
// `ks` consecutive butterfly stages [L, L + ks) in shared memory: a block loads the 2^ks
// points whose indices differ only in bits [L, L + ks), for 2^log_g consecutive values of
// the low bits (so a warp reads runs of 2^log_g consecutive 32-byte elements), does the
// stages, and writes them back. With up to 9 stages a pass, 2^27 is 3 passes.
//
// Two orders, chosen so that the H step needs no bit reversal between transforms:
// - DIF (Gentleman-Sande, stages from high to low): natural order in, bit-reversed out;
// - DIT (Cooley-Tukey, stages from low to high): bit-reversed in, natural order out.
//
// Twiddles: the butterfly of stage s at offset r in its 2^(s+1)-block uses ω_{2^(s+1)}^r =
// ω^(r·2^(log_n-1-s)), an exponent below n/2 looked up as hi[e >> lo_bits] · lo[e & mask] in
// two small host-computed tables (2^14 entries each at 2^28). Each stage's distinct twiddles
// for the block are computed once into shared memory, so a butterfly costs one product (the
// pass at L == 0 builds only its top stage's table; the lower stages read a strided subset).
//
// A pass may also scale every element by c·x^k on load (first pass) or on store (last pass),
// where k is the element's index or its bit reversal: that is how the coset powers g^i and
// the 1/n of the inverse are fused into the transform instead of costing a pass each.
// All tables live in one buffer `tw`; arguments are offsets into it.
#include <cstdint>

#include "field/fr.cuh"

#define NTT_MAX_LOG_POINTS 10  // points per block: 2^10 x 32 B = 32 KiB of shared memory
#define NTT_MAX_THREADS 256

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
// u ^ ((u >> 3 ^ u >> 6 ^ u >> 9) & 7). Without this XOR swizzle, 8 threads reading consecutive
// elements hit only 4 of the 8 16-byte bank groups (2-way conflicts), strided butterflies and
// strided twiddle reads (the L == 0 pass) up to 8-way. With it, a bank model over every pass of
// 2^12 ... 2^27 gives 1.01-1.15x the ideal wavefronts (the former 8-byte accesses: ~4x). The
// XOR only permutes units within aligned groups of 8, so an array of a multiple of 8 units stays
// in bounds. Mirrored by plan::emulate::swizzle (the CPU model of this kernel).
static __device__ __forceinline__ uint32_t swizzle(uint32_t u) { return u ^ (((u >> 3) ^ (u >> 6) ^ (u >> 9)) & 7u); }

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

// One pass: stages [L, L + ks) of a DIF (dit == 0, stages descending) or DIT (dit == 1,
// ascending) transform of 2^log_n points, for 2^log_g consecutive low indices per block.
// Requires ks >= 1, ks + log_g <= NTT_MAX_LOG_POINTS, log_g <= L, L + ks <= log_n.
// blockDim.x = min(2^(ks + log_g - 1), NTT_MAX_THREADS); gridDim.x = 2^(log_n - ks - log_g).
// Scale: applied to each element on load (scale_at == 1) or on store (scale_at == 2), with
// k = its global index, or the bit reversal of it when scale_bitrev != 0.
extern "C" __global__ void __launch_bounds__(NTT_MAX_THREADS)
ntt_pass(fr_t* a, const fr_t* tw, uint32_t log_n, uint32_t L, uint32_t ks, uint32_t log_g, uint32_t dit,
         uint32_t w_lo, uint32_t w_hi, uint32_t w_lo_bits, uint32_t scale_at, uint32_t scale_mode,
         uint32_t s_lo, uint32_t s_hi, uint32_t s_lo_bits, uint32_t scale_bitrev) {
    // Two 16-byte units per element, swizzled (sh_ld/sh_st).
    __shared__ uint4 sh[2 << NTT_MAX_LOG_POINTS];
    __shared__ uint4 tws[2 << (NTT_MAX_LOG_POINTS - 1)];

    const uint32_t G = 1u << log_g;
    const uint32_t P = 1u << (ks + log_g);
    const uint32_t half = P >> 1;
    const uint32_t blk = blockIdx.x;
    // Block -> (hi, lo_base): hi selects bits above L + ks, lo_base the run of G low indices.
    const uint32_t lo_blocks_log = L - log_g;
    const uint32_t lo_base = (blk & ((1u << lo_blocks_log) - 1)) << log_g;
    const uint32_t hi_base = (blk >> lo_blocks_log) << (L + ks);

    // Load: element e = j·G + g  <->  global index hi_base + j·2^L + lo_base + g.
    for (uint32_t e = threadIdx.x; e < P; e += blockDim.x) {
        const uint32_t idx = hi_base + ((e >> log_g) << L) + lo_base + (e & (G - 1));
        fr_t v = ld(a + idx);
        if (scale_at == 1u && scale_mode != NTT_SCALE_NONE) {
            const uint32_t k = scale_bitrev ? bitrev(idx, log_n) : idx;
            v = fr_mul(v, scale_factor(tw, scale_mode, s_lo, s_hi, s_lo_bits, k));
        }
        sh_st(sh, e, v);
    }

    const uint32_t w_mask = (1u << w_lo_bits) - 1;
    for (uint32_t step = 0; step < ks; step++) {
        const uint32_t t = dit ? step : (ks - 1 - step);  // local stage
        const uint32_t hm = 1u << t;                       // half-span in j units
        // This stage's twiddles (global stage s = L + t):
        // tws[r·G + g] = ω^((r·2^L + lo_base + g) · 2^(log_n-1-s)), r < hm.
        // When L == 0 (then G == 1 and lo_base == 0) stage t's table is the top stage's read with
        // stride 2^(ks-1-t): ω^(r·2^(log_n-1-t)) = ω^((r·2^(ks-1-t))·2^(log_n-ks)). Built once, at
        // step 0, it saves about half of that pass's table products.
        const bool build = L != 0 || step == 0;
        const uint32_t tb = L == 0 ? ks - 1 : t;  // the stage whose table is built
        __syncthreads();  // previous stage's butterflies are done with tws and sh (and the load with sh)
        if (build) {
            for (uint32_t i = threadIdx.x; i < (1u << (tb + log_g)); i += blockDim.x) {
                const uint32_t r = i >> log_g, g = i & (G - 1);
                const uint32_t e = ((r << L) + lo_base + g) << (log_n - 1 - (L + tb));
                sh_st(tws, i, fr_mul(ld(tw + w_hi + (e >> w_lo_bits)), ld(tw + w_lo + (e & w_mask))));
            }
            __syncthreads();
        }
        const uint32_t tw_shift = L == 0 ? ks - 1 - t : 0;
        for (uint32_t b = threadIdx.x; b < half; b += blockDim.x) {
            const uint32_t g = b & (G - 1), q = b >> log_g;
            const uint32_t r = q & (hm - 1);
            const uint32_t j0 = ((q >> t) << (t + 1)) | r;
            const uint32_t e0 = (j0 << log_g) | g, e1 = ((j0 + hm) << log_g) | g;
            const fr_t w = sh_ld(tws, ((r << tw_shift) << log_g) | g);
            const fr_t x = sh_ld(sh, e0), y = sh_ld(sh, e1);
            if (dit) {
                const fr_t u = fr_mul(y, w);
                sh_st(sh, e0, fr_add(x, u));
                sh_st(sh, e1, fr_sub(x, u));
            } else {
                sh_st(sh, e0, fr_add(x, y));
                sh_st(sh, e1, fr_mul(fr_sub(x, y), w));
            }
        }
    }
    __syncthreads();

    for (uint32_t e = threadIdx.x; e < P; e += blockDim.x) {
        const uint32_t idx = hi_base + ((e >> log_g) << L) + lo_base + (e & (G - 1));
        fr_t v = sh_ld(sh, e);
        if (scale_at == 2u && scale_mode != NTT_SCALE_NONE) {
            const uint32_t k = scale_bitrev ? bitrev(idx, log_n) : idx;
            v = fr_mul(v, scale_factor(tw, scale_mode, s_lo, s_hi, s_lo_bits, k));
        }
        st(a + idx, v);
    }
}

// In-place bit-reversal permutation of 2^log_n points (log_n >= 1); one thread per index.
extern "C" __global__ void ntt_bitrev(fr_t* a, uint32_t log_n) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (1u << log_n)) return;
    const uint32_t j = bitrev(i, log_n);
    if (i < j) {
        const fr_t x = ld(a + i), y = ld(a + j);
        st(a + i, y);
        st(a + j, x);
    }
}

// a[i] = (a[i]·b[i] - c[i]) · tw[z_inv]: the H step's pointwise part, divided by Z on the coset.
extern "C" __global__ void ntt_pointwise(fr_t* a, const fr_t* b, const fr_t* c, const fr_t* tw, uint32_t z_inv,
                                         uint32_t n) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    st(a + i, fr_mul(fr_sub(fr_mul(ld(a + i), ld(b + i)), ld(c + i)), tw[z_inv]));
}
