// The curve-dependent MSM kernels, instantiated by g1.cu and g2.cu.
#pragma once
#include "msm/msm.cuh"

using namespace kiln_msm;

// Threads per block of msm_accumulate_*: the host must launch it with exactly this many
// (Rust reads this line: kiln_kernels::msm::ACC_BLOCK, which MsmContext launches with).
#define MSM_ACC_BLOCK 128

// ACC_MIN_BLOCKS: resident blocks of MSM_ACC_BLOCK threads per SM that ptxas must allow. G1
// inlined needs ~168 registers: 3 blocks of 128 threads = 12 warps per SM fit in 65536
// registers with no spill (a 256-thread block would leave only 8 warps resident).
#define MSM_CURVE_KERNELS(SUFFIX, F, ACC_MIN_BLOCKS)                                                                 \
    extern "C" __global__ void __launch_bounds__(MSM_ACC_BLOCK, ACC_MIN_BLOCKS) msm_accumulate_##SUFFIX(             \
        const affine_t<F>* bases, const uint32_t* sorted, const uint32_t* offsets, uint32_t n, uint32_t nb,          \
        uint32_t windows, uint32_t S, uint32_t chunks, xyzz_t<F>* buckets, xyzz_t<F>* head, xyzz_t<F>* tail,         \
        uint32_t* head_b, uint32_t* tail_b) {                                                                        \
        accumulate<F>(bases, sorted, offsets, n, nb, windows, S, chunks, buckets, head, tail, head_b, tail_b);               \
    }                                                                                                                \
    extern "C" __global__ void msm_join_heads_##SUFFIX(const uint32_t* offsets, uint32_t nb, uint32_t windows,       \
                                                       uint32_t S, uint32_t chunks, uint32_t level,                  \
                                                       xyzz_t<F>* head, const uint32_t* head_b) {                    \
        join_heads<F>(offsets, nb, windows, S, chunks, level, head, head_b);                                         \
    }                                                                                                                \
    extern "C" __global__ void msm_bucket_fixup_##SUFFIX(const uint32_t* offsets, uint32_t nb, uint32_t windows,     \
                                                         uint32_t S, uint32_t chunks, xyzz_t<F>* buckets,            \
                                                         const xyzz_t<F>* head, const xyzz_t<F>* tail) {             \
        bucket_fixup<F>(offsets, nb, windows, S, chunks, buckets, head, tail);                                       \
    }                                                                                                                \
    extern "C" __global__ void msm_bucket_reduce_##SUFFIX(const xyzz_t<F>* buckets, uint32_t nb, uint32_t windows,   \
                                                          uint32_t L, uint32_t segs, xyzz_t<F>* out) {               \
        bucket_reduce<F>(buckets, nb, windows, L, segs, out);                                                        \
    }                                                                                                                \
    extern "C" __global__ void msm_sum_groups_##SUFFIX(const xyzz_t<F>* in, xyzz_t<F>* out, uint32_t len,            \
                                                       uint32_t groups, uint32_t fan) {                              \
        sum_groups<F>(in, out, len, groups, fan);                                                                    \
    }                                                                                                                \
    extern "C" __global__ void msm_combine_##SUFFIX(const xyzz_t<F>* window_sums, uint32_t windows, uint32_t c,      \
                                                    const xyzz_t<F>* extra, jacobian_t<F>* out) {                    \
        combine<F>(window_sums, windows, c, extra, out);                                                             \
    }                                                                                                                \
    extern "C" __global__ void msm_sum_indexed_##SUFFIX(const affine_t<F>* bases, const uint32_t* idx,               \
                                                        const uint32_t* count, uint32_t P, xyzz_t<F>* partial) {     \
        sum_indexed<F>(bases, idx, count, P, partial);                                                               \
    }                                                                                                                \
    extern "C" __global__ void msm_fold_##SUFFIX(xyzz_t<F>* buf, uint32_t len, uint32_t fan) {                       \
        fold<F>(buf, len, fan);                                                                                      \
    }

