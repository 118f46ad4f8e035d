// Fixed-base scalar multiplication for the setup: out[i] = k_i · G for one fixed point G
// and millions of scalars k_i (every query of the parameters is such a product).
//
// The host builds a window table of G once: for window w and signed digit magnitude
// d in [1, 2^(c-1)], table[w · 2^(c-1) + d - 1] = d · 2^(c·w) · G (affine). A scalar's signed
// c-bit digits (msm/msm.cuh's for_each_digit, the same digits as the MSM's) then select one
// table entry per window, negated for a negative digit: ceil(256 / c) mixed additions and no
// doublings per point. With c = 13 the G1 table is 7.5 MiB, small enough to stay in L2.
//
// Two kernels, so that the affine conversion shares one inversion among `per` points
// (Montgomery's trick, one thread per run of points): fixed_base_mul_* writes XYZZ points,
// fixed_base_to_affine_* turns them into blst's affine form (infinity = all zeros).
#pragma once
#include "msm/msm.cuh"

using namespace kiln_msm;

#define SETUP_BLOCK 128

template <class F>
KILN_DEV void fixed_base_mul(const affine_t<F>* table, uint32_t c, uint32_t windows, const fr_t* scalars,
                             uint32_t n, xyzz_t<F>* out) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const uint32_t half = 1u << (c - 1);
    xyzz_t<F> acc = kiln_curve::xyzz_zero<F>();
    fr_t k = canonical(scalars, i);
    for_each_digit(k, c, windows, [&](uint32_t w, uint32_t b, bool negative) {
        affine_t<F> p = table[(size_t)w * half + b];
        kiln_curve::xyzz_add_affine(acc, negative ? kiln_curve::affine_neg(p) : p);
    });
    out[i] = acc;
}

template <class F>
KILN_DEV void fixed_base_to_affine(const xyzz_t<F>* in, uint32_t n, uint32_t per, typename F::T* scratch,
                                   affine_t<F>* out) {
    size_t first = (size_t)(blockIdx.x * blockDim.x + threadIdx.x) * per;
    if (first >= n) return;
    uint32_t len = (uint32_t)min((size_t)per, (size_t)n - first);
    kiln_curve::xyzz_batch_to_affine(in + first, out + first, scratch + first, len);
}

#define SETUP_CURVE_KERNELS(SUFFIX, F)                                                                               \
    extern "C" __global__ void __launch_bounds__(SETUP_BLOCK) fixed_base_mul_##SUFFIX(                               \
        const affine_t<F>* table, uint32_t c, uint32_t windows, const fr_t* scalars, uint32_t n, xyzz_t<F>* out) {   \
        fixed_base_mul<F>(table, c, windows, scalars, n, out);                                                       \
    }                                                                                                                \
    extern "C" __global__ void __launch_bounds__(SETUP_BLOCK) fixed_base_to_affine_##SUFFIX(                         \
        const xyzz_t<F>* in, uint32_t n, uint32_t per, typename F::T* scratch, affine_t<F>* out) {                   \
        fixed_base_to_affine<F>(in, n, per, scratch, out);                                                           \
    }
