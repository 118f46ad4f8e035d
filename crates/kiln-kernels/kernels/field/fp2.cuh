// Fp2 = Fp[u] / (u^2 + 1), the field of G2's coordinates: c0 + c1*u, byte-for-byte
// blst_fp2 / blstrs::Fp2 (c0 first). Each component is an fp_t in Montgomery form.
#pragma once
#include "field/fp.cuh"

// KILN_FP2_NOINLINE makes the Fp2 products real calls (each still inlines its 3 Fp
// products): G2 formulas then compile in seconds instead of minutes, at some speed cost.
#if defined(__CUDACC__) && (defined(KILN_FP2_NOINLINE) || defined(KILN_FIELD_NOINLINE))
#define KILN_HEAVY2 static __device__ __noinline__
#else
#define KILN_HEAVY2 KILN_DEV
#endif

struct alignas(8) fp2_t {
    fp_t c0, c1;
};

KILN_DEV fp2_t fp2_zero() { return fp2_t{fp_zero(), fp_zero()}; }
KILN_DEV fp2_t fp2_one() { return fp2_t{fp_one(), fp_zero()}; }
KILN_DEV fp2_t fp2_add(const fp2_t& a, const fp2_t& b) { return fp2_t{fp_add(a.c0, b.c0), fp_add(a.c1, b.c1)}; }
KILN_DEV fp2_t fp2_sub(const fp2_t& a, const fp2_t& b) { return fp2_t{fp_sub(a.c0, b.c0), fp_sub(a.c1, b.c1)}; }
KILN_DEV fp2_t fp2_neg(const fp2_t& a) { return fp2_t{fp_neg(a.c0), fp_neg(a.c1)}; }
KILN_DEV fp2_t fp2_dbl(const fp2_t& a) { return fp2_t{fp_dbl(a.c0), fp_dbl(a.c1)}; }
KILN_DEV bool fp2_eq(const fp2_t& a, const fp2_t& b) { return fp_eq(a.c0, b.c0) && fp_eq(a.c1, b.c1); }
KILN_DEV bool fp2_is_zero(const fp2_t& a) { return fp_is_zero(a.c0) && fp_is_zero(a.c1); }

// Karatsuba with lazy reduction: (a0 + a1 u)(b0 + b1 u) = (a0 b0 - a1 b1) +
// ((a0 + a1)(b0 + b1) - a0 b0 - a1 b1) u, with the three products left unreduced (768 bits,
// kiln_mont::mul_wide) and one Montgomery reduction per component: 2 reductions instead of 3,
// and no reduced sums or differences on the way.
//
// Bounds (p < 2^381, R = 2^384; redc needs its input < p·R):
//   c1 = t2 - t0 - t1 = a0 b1 + a1 b0 < 2p^2 < p·R. a0 + a1 and b0 + b1 stay unreduced
//        (< 2p), so t2 < 4p^2 < 2^768.
//   c0 = t0 - t1 + p·2^383: the multiple of p lifts it above 0 (t1 < p^2 < p·2^383) and
//        keeps c0 < p^2 + p·2^383 < p·R. p·2^383 = (p·2^31)·2^352 is 0 in limbs 0..10, so
//        only limbs 11..23 are added, as immediates.
KILN_HEAVY2 fp2_t fp2_mul(const fp2_t& a, const fp2_t& b) {
    using namespace kiln_ptx;
    using P = FpParams;
    // Ordered for register pressure (G2 kernels run near 255 registers): t0 + t1 replaces t0
    // and t1 before the third product, and the sums are formed only for it.
    uint32_t t0[24], t1[24], w[24];
    kiln_mont::mul_wide<P>(t0, a.c0, b.c0);
    kiln_mont::mul_wide<P>(t1, a.c1, b.c1);
    kiln_mont::sub_wide<P>(w, t0, t1);  // mod 2^768: adding p·2^383 brings it back
    w[11] = add_cc(w[11], P::mod(0) << 31);
#pragma unroll
    for (int k = 1; k < 12; k++) w[11 + k] = addc_cc(w[11 + k], (P::mod(k) << 31) | (P::mod(k - 1) >> 1));
    w[23] = addc(w[23], P::mod(11) >> 1);
    kiln_mont::add_wide<P>(t0, t0, t1);  // t0 + t1 < 2p^2
    fp_t c0 = kiln_mont::redc<P>(w);
    kiln_mont::mul_wide<P>(t1, kiln_mont::add_unreduced<P>(a.c0, a.c1), kiln_mont::add_unreduced<P>(b.c0, b.c1));
    kiln_mont::sub_wide<P>(w, t1, t0);
    return fp2_t{c0, kiln_mont::redc<P>(w)};
}

// (a0 + a1 u)^2 = (a0 + a1)(a0 - a1) + 2 a0 a1 u: 2 Fp products. fp2_mul's lazy reduction
// saves nothing here: two products need two reductions either way.
KILN_HEAVY2 fp2_t fp2_sqr(const fp2_t& a) {
    fp_t c0 = fp_mul(fp_add(a.c0, a.c1), fp_sub(a.c0, a.c1));
    fp_t c1 = fp_mul(a.c0, a.c1);
    return fp2_t{c0, fp_dbl(c1)};
}

// 1 / (a0 + a1 u) = (a0 - a1 u) / (a0^2 + a1^2); 0 maps to 0 (fp_inv(0) = 0).
KILN_HEAVY2 fp2_t fp2_inv(const fp2_t& a) {
    fp_t n = fp_add(fp_sqr(a.c0), fp_sqr(a.c1));
    fp_t ni = fp_inv(n);
    return fp2_t{fp_mul(a.c0, ni), fp_neg(fp_mul(a.c1, ni))};
}

// Multiplication by an Fp scalar (both components).
KILN_DEV fp2_t fp2_mul_fp(const fp2_t& a, const fp_t& s) { return fp2_t{fp_mul(a.c0, s), fp_mul(a.c1, s)}; }
KILN_DEV fp2_t fp2_to_mont(const fp2_t& a) { return fp2_t{fp_to_mont(a.c0), fp_to_mont(a.c1)}; }
KILN_DEV fp2_t fp2_from_mont(const fp2_t& a) { return fp2_t{fp_from_mont(a.c0), fp_from_mont(a.c1)}; }

// a^e for a 32-bit exponent.
KILN_HEAVY2 fp2_t fp2_pow(const fp2_t& a, uint32_t e) {
    fp2_t r = fp2_one();
    for (int bit = 31; bit >= 0; bit--) {
        r = fp2_sqr(r);
        if ((e >> bit) & 1u) r = fp2_mul(r, a);
    }
    return r;
}

// Field-operation tables for the curve templates (kernels/curve/curve.cuh): one
// implementation of each point formula serves G1 (over Fp) and G2 (over Fp2).
struct FpOps {
    using T = fp_t;
    static KILN_DEV T zero() { return fp_zero(); }
    static KILN_DEV T one() { return fp_one(); }
    static KILN_DEV T add(const T& a, const T& b) { return fp_add(a, b); }
    static KILN_DEV T sub(const T& a, const T& b) { return fp_sub(a, b); }
    static KILN_DEV T dbl(const T& a) { return fp_dbl(a); }
    static KILN_DEV T neg(const T& a) { return fp_neg(a); }
    static KILN_DEV T mul(const T& a, const T& b) { return fp_mul(a, b); }
    static KILN_DEV T sqr(const T& a) { return fp_sqr(a); }
    static KILN_DEV T inv(const T& a) { return fp_inv(a); }
    static KILN_DEV bool eq(const T& a, const T& b) { return fp_eq(a, b); }
    static KILN_DEV bool is_zero(const T& a) { return fp_is_zero(a); }
};

struct Fp2Ops {
    using T = fp2_t;
    static KILN_DEV T zero() { return fp2_zero(); }
    static KILN_DEV T one() { return fp2_one(); }
    static KILN_DEV T add(const T& a, const T& b) { return fp2_add(a, b); }
    static KILN_DEV T sub(const T& a, const T& b) { return fp2_sub(a, b); }
    static KILN_DEV T dbl(const T& a) { return fp2_dbl(a); }
    static KILN_DEV T neg(const T& a) { return fp2_neg(a); }
    static KILN_DEV T mul(const T& a, const T& b) { return fp2_mul(a, b); }
    static KILN_DEV T sqr(const T& a) { return fp2_sqr(a); }
    static KILN_DEV T inv(const T& a) { return fp2_inv(a); }
    static KILN_DEV bool eq(const T& a, const T& b) { return fp2_eq(a, b); }
    static KILN_DEV bool is_zero(const T& a) { return fp2_is_zero(a); }
};
