// Fp, the BLS12-381 base field (p, 381 bits): 12 little-endian 32-bit limbs in Montgomery
// form, byte-for-byte blst_fp / blstrs::Fp. All functions take and return fully reduced
// values.
#pragma once
#include "field/constants.cuh"
#include "field/mont.cuh"

#ifndef KILN_CONSTANT
#ifdef __CUDACC__
#define KILN_CONSTANT static __constant__ const
#else
#define KILN_CONSTANT static const
#endif
#endif

struct alignas(8) fp_t {
    uint32_t limb[12];
};

// Constants (Montgomery form unless said otherwise), in constant memory.
KILN_CONSTANT uint32_t FP_MODULUS[12] = {FP_MODULUS_LIMBS};              // p (plain integer)
KILN_CONSTANT uint32_t FP_R2[12] = {FP_R2_LIMBS};                        // R^2 mod p (plain integer)
KILN_CONSTANT uint32_t FP_ONE[12] = {FP_ONE_LIMBS};                      // 1 = R mod p
KILN_CONSTANT uint32_t FP_INV_EXP[12] = {FP_MODULUS_MINUS_2_LIMBS};      // p - 2

struct FpParams {
    static constexpr int N = 12;
    static constexpr bool MOD_LOW64_IS_2_64_MINUS_2_32_PLUS_1 = false;  // see kiln_mont::mul
    using T = fp_t;
    static KILN_DEV uint32_t m0() { return FP_M0; }  // -p^-1 mod 2^32
    // Local constant tables indexed with compile-time indices (after unrolling): immediates.
    static KILN_DEV uint32_t mod(int i) { const uint32_t v[12] = {FP_MODULUS_LIMBS}; return v[i]; }
    static KILN_DEV uint32_t one(int i) { const uint32_t v[12] = {FP_ONE_LIMBS}; return v[i]; }
    static KILN_DEV uint32_t r2(int i) { const uint32_t v[12] = {FP_R2_LIMBS}; return v[i]; }
    static KILN_DEV uint32_t inv_exp(int i) { return FP_INV_EXP[i]; }
};

// Builds an fp_t from 12 limbs (e.g. one of the FP_* tables above).
KILN_DEV fp_t fp_from_limbs(const uint32_t* l) {
    fp_t r;
#pragma unroll
    for (int j = 0; j < 12; j++) r.limb[j] = l[j];
    return r;
}
KILN_DEV fp_t fp_zero() { fp_t r; for (int j = 0; j < 12; j++) r.limb[j] = 0; return r; }
KILN_DEV fp_t fp_one() { return kiln_mont::from_limbs_one<FpParams>(); }

KILN_DEV fp_t fp_add(const fp_t& a, const fp_t& b) { return kiln_mont::add<FpParams>(a, b); }
KILN_DEV fp_t fp_sub(const fp_t& a, const fp_t& b) { return kiln_mont::sub<FpParams>(a, b); }
KILN_DEV fp_t fp_neg(const fp_t& a) { return kiln_mont::neg<FpParams>(a); }
KILN_DEV fp_t fp_dbl(const fp_t& a) { return kiln_mont::add<FpParams>(a, a); }
KILN_HEAVY fp_t fp_mul(const fp_t& a, const fp_t& b) { return kiln_mont::mul<FpParams>(a, b); }
KILN_HEAVY fp_t fp_sqr(const fp_t& a) { return kiln_mont::sqr<FpParams>(a); }  // = mul(a, a): see kiln_mont::sqr
KILN_HEAVY fp_t fp_inv(const fp_t& a) { return kiln_mont::inv<FpParams>(a); }  // 0 -> 0
KILN_DEV bool fp_eq(const fp_t& a, const fp_t& b) { return kiln_mont::eq<FpParams>(a, b); }
KILN_DEV bool fp_is_zero(const fp_t& a) { return kiln_mont::is_zero<FpParams>(a); }
// Plain integer (< p) -> Montgomery form, and back.
KILN_DEV fp_t fp_to_mont(const fp_t& a) { return kiln_mont::to_mont<FpParams>(a); }
KILN_DEV fp_t fp_from_mont(const fp_t& a) { return kiln_mont::from_mont<FpParams>(a); }
// a^e for a 32-bit exponent.
KILN_HEAVY fp_t fp_pow(const fp_t& a, uint32_t e) { return kiln_mont::pow_u32<FpParams>(a, e); }
