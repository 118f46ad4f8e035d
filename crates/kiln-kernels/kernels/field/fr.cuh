// Fr, the BLS12-381 scalar field (r, 255 bits): 8 little-endian 32-bit limbs in Montgomery
// form, byte-for-byte blst_fr / blstrs::Scalar. All functions take and return fully reduced
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

struct alignas(8) fr_t {
    uint32_t limb[8];
};

// Constants for the NTT and friends (Montgomery form unless said otherwise), in constant memory.
KILN_CONSTANT uint32_t FR_MODULUS[8] = {FR_MODULUS_LIMBS};              // r (plain integer)
KILN_CONSTANT uint32_t FR_R2[8] = {FR_R2_LIMBS};                        // R^2 mod r (plain integer)
KILN_CONSTANT uint32_t FR_ONE[8] = {FR_ONE_LIMBS};                      // 1 = R mod r
KILN_CONSTANT uint32_t FR_ROOT_OF_UNITY[8] = {FR_ROOT_OF_UNITY_LIMBS};  // order 2^32 (ff ROOT_OF_UNITY)
KILN_CONSTANT uint32_t FR_ROOT_OF_UNITY_INV[8] = {FR_ROOT_OF_UNITY_INV_LIMBS};
KILN_CONSTANT uint32_t FR_GENERATOR[8] = {FR_GENERATOR_LIMBS};          // 7 (ff MULTIPLICATIVE_GENERATOR)
KILN_CONSTANT uint32_t FR_GENERATOR_INV[8] = {FR_GENERATOR_INV_LIMBS};  // 1/7
KILN_CONSTANT uint32_t FR_INV_EXP[8] = {FR_MODULUS_MINUS_2_LIMBS};      // r - 2
KILN_CONSTANT uint32_t FR_M0_CONST[1] = {FR_M0};                       // see FrParams::m0

struct FrParams {
    static constexpr int N = 8;
    static constexpr bool MOD_LOW64_IS_2_64_MINUS_2_32_PLUS_1 = true;  // see kiln_mont::mul
    using T = fr_t;
    // -r^-1 mod 2^32 = 2^32 - 1. Read from constant memory through a volatile load: seeing the
    // immediate, ptxas rewrites q = t0·M0 as q = -t0 and then compiles the reduction's products
    // as separate low/high IMADs instead of paired IMAD.WIDE.U32.X (sm_90: 264 SASS instructions
    // per product instead of 214, and ~20% lower throughput).
    static KILN_DEV uint32_t m0() { return *(volatile const uint32_t*)&FR_M0_CONST[0]; }
    // Local constant tables indexed with compile-time indices (after unrolling): immediates.
    static KILN_DEV uint32_t mod(int i) { const uint32_t v[8] = {FR_MODULUS_LIMBS}; return v[i]; }
    static KILN_DEV uint32_t one(int i) { const uint32_t v[8] = {FR_ONE_LIMBS}; return v[i]; }
    static KILN_DEV uint32_t r2(int i) { const uint32_t v[8] = {FR_R2_LIMBS}; return v[i]; }
    static KILN_DEV uint32_t inv_exp(int i) { return FR_INV_EXP[i]; }
};

// Builds an fr_t from 8 limbs (e.g. one of the FR_* tables above).
KILN_DEV fr_t fr_from_limbs(const uint32_t* l) {
    fr_t r;
#pragma unroll
    for (int j = 0; j < 8; j++) r.limb[j] = l[j];
    return r;
}
KILN_DEV fr_t fr_zero() { fr_t r; for (int j = 0; j < 8; j++) r.limb[j] = 0; return r; }
KILN_DEV fr_t fr_one() { return kiln_mont::from_limbs_one<FrParams>(); }
KILN_DEV fr_t fr_root_of_unity() { return fr_from_limbs(FR_ROOT_OF_UNITY); }
KILN_DEV fr_t fr_root_of_unity_inv() { return fr_from_limbs(FR_ROOT_OF_UNITY_INV); }
KILN_DEV fr_t fr_generator() { return fr_from_limbs(FR_GENERATOR); }
KILN_DEV fr_t fr_generator_inv() { return fr_from_limbs(FR_GENERATOR_INV); }

KILN_DEV fr_t fr_add(const fr_t& a, const fr_t& b) { return kiln_mont::add<FrParams>(a, b); }
KILN_DEV fr_t fr_sub(const fr_t& a, const fr_t& b) { return kiln_mont::sub<FrParams>(a, b); }
KILN_DEV fr_t fr_neg(const fr_t& a) { return kiln_mont::neg<FrParams>(a); }
KILN_DEV fr_t fr_dbl(const fr_t& a) { return kiln_mont::add<FrParams>(a, a); }
KILN_HEAVY fr_t fr_mul(const fr_t& a, const fr_t& b) { return kiln_mont::mul<FrParams>(a, b); }
KILN_HEAVY fr_t fr_sqr(const fr_t& a) { return kiln_mont::mul<FrParams>(a, a); }
KILN_HEAVY fr_t fr_inv(const fr_t& a) { return kiln_mont::inv<FrParams>(a); }  // 0 -> 0
KILN_DEV bool fr_eq(const fr_t& a, const fr_t& b) { return kiln_mont::eq<FrParams>(a, b); }
KILN_DEV bool fr_is_zero(const fr_t& a) { return kiln_mont::is_zero<FrParams>(a); }
// Plain integer (< r) -> Montgomery form, and back.
KILN_DEV fr_t fr_to_mont(const fr_t& a) { return kiln_mont::to_mont<FrParams>(a); }
KILN_DEV fr_t fr_from_mont(const fr_t& a) { return kiln_mont::from_mont<FrParams>(a); }
// a^e for a 32-bit exponent.
KILN_HEAVY fr_t fr_pow(const fr_t& a, uint32_t e) { return kiln_mont::pow_u32<FrParams>(a, e); }
