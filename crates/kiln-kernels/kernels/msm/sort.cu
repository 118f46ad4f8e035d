// Curve-independent MSM kernels (see msm/msm.cuh): signed digits, counting sort of
// (bucket, point) pairs per window, and the 0/1/other split. Module "msm_sort".
#include "msm/msm.cuh"

using namespace kiln_msm;

// counts[w*nb + b] += 1 for every non-zero digit of every scalar (msm.cuh).
extern "C" __global__ void msm_histogram(const fr_t* scalars, uint32_t n, uint32_t c, uint32_t windows,
                                         uint32_t* counts) {
    histogram(scalars, n, c, windows, counts);
}

// One block per window: offsets[w*(nb+1) + b] = Σ_{b' < b} counts[w*nb + b'] (b in [0, nb]);
// cursor[w*nb + b] = offsets[w*(nb+1) + b].
extern "C" __global__ void msm_scan(const uint32_t* counts, uint32_t nb, uint32_t* offsets, uint32_t* cursor) {
    __shared__ uint32_t part[1024];
    const uint32_t w = blockIdx.x;
    const uint32_t T = blockDim.x;  // 1024
    const uint32_t per = (nb + T - 1) / T;
    const uint32_t lo = min(threadIdx.x * per, nb), hi = min(lo + per, nb);
    const uint32_t* cnt = counts + (size_t)w * nb;
    uint32_t sum = 0;
    for (uint32_t b = lo; b < hi; b++) sum += cnt[b];
    part[threadIdx.x] = sum;
    __syncthreads();
    // Hillis-Steele inclusive scan of the per-thread sums.
    for (uint32_t d = 1; d < T; d <<= 1) {
        uint32_t v = threadIdx.x >= d ? part[threadIdx.x - d] : 0;
        __syncthreads();
        part[threadIdx.x] += v;
        __syncthreads();
    }
    uint32_t run = part[threadIdx.x] - sum;  // exclusive
    uint32_t* off = offsets + (size_t)w * (nb + 1);
    uint32_t* cur = cursor + (size_t)w * nb;
    for (uint32_t b = lo; b < hi; b++) {
        off[b] = run;
        cur[b] = run;
        run += cnt[b];
    }
    if (threadIdx.x == T - 1) off[nb] = part[T - 1];
}

// sorted[w*n + slot] = point index (| MSM_SIGN when the digit is negative), one thread per
// (scalar, window): see scatter_by_window in msm.cuh. map (nullable) maps scalar i to its base
// index (the split path's compacted tail).
extern "C" __global__ void msm_scatter(const fr_t* scalars, const uint32_t* map, uint32_t n, uint32_t c,
                                       uint32_t windows, uint32_t* cursor, uint32_t* sorted) {
    scatter_by_window(scalars, map, n, c, windows, cursor, sorted);
}

// Split: classify n Montgomery scalars into 0, 1 (= R mod r) and other. Bitmaps (one bit per
// scalar, words of 32) and compacted index lists; counts[0] = #ones, counts[1] = #others.
extern "C" __global__ void msm_classify(const fr_t* scalars, uint32_t n, uint32_t* zero_bits, uint32_t* one_bits,
                                        uint32_t* ones_idx, uint32_t* others_idx, uint32_t* counts) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    const uint32_t lane = threadIdx.x & 31;
    bool is_zero = false, is_one = false, valid = i < n;
    if (valid) {
        fr_t s = scalars[i];
        is_zero = true;
        is_one = true;
#pragma unroll
        for (int j = 0; j < 8; j++) {
            is_zero &= s.limb[j] == 0;
            is_one &= s.limb[j] == FR_ONE[j];
        }
    }
    const bool is_other = valid && !is_zero && !is_one;
    uint32_t zmask = __ballot_sync(0xffffffffu, is_zero);
    uint32_t omask = __ballot_sync(0xffffffffu, is_one);
    uint32_t xmask = __ballot_sync(0xffffffffu, is_other);
    // blockDim.x is a multiple of 32, so a warp covers the 32 scalars of one bitmap word.
    if (lane == 0 && i < n) {
        zero_bits[i / 32] = zmask;
        one_bits[i / 32] = omask;
    }
    uint32_t obase = 0, xbase = 0;
    if (lane == 0) {
        if (omask) obase = atomicAdd(&counts[0], __popc(omask));
        if (xmask) xbase = atomicAdd(&counts[1], __popc(xmask));
    }
    obase = __shfl_sync(0xffffffffu, obase, 0);
    xbase = __shfl_sync(0xffffffffu, xbase, 0);
    const uint32_t below = (1u << lane) - 1;
    if (is_one) ones_idx[obase + __popc(omask & below)] = i;
    if (is_other) others_idx[xbase + __popc(xmask & below)] = i;
}

// out[k] = scalars[idx[k]] for k < *count.
extern "C" __global__ void msm_gather_scalars(const fr_t* scalars, const uint32_t* idx, const uint32_t* count,
                                              fr_t* out) {
    uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < *count) out[k] = scalars[idx[k]];
}

