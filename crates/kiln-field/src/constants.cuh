// BLS12-381 domain constants: the one set of values shared by the kernels and the host.
// Two byte-equal copies, so that each crate builds from its own folder (and packages alone):
// crates/kiln-kernels/kernels/field/constants.cuh (nvcc includes it) and
// crates/kiln-field/src/constants.cuh (kiln-field embeds it). Edit one, copy it over the
// other: tests/tests/copies.rs fails while they differ.
// Little-endian 32-bit limbs (limb 0 is least significant), exactly the bytes blst keeps.
// "Montgomery form" of x means x * R mod m (R = 2^256 for Fr, 2^384 for Fp), which is how
// blst/blstrs store every field element. crates/kiln-field parses this file in a test and
// checks every constant against blstrs/ff, so a wrong digit here fails CPU CI.
// Format (parsed by kiln-field): `#define NAME_LIMBS 0x........u, ...` or `#define NAME 0x........u`.
#pragma once
// ---- Fr (scalar field, 255 bits, 8 limbs) ----
// r
#define FR_MODULUS_LIMBS 0x00000001u, 0xffffffffu, 0xfffe5bfeu, 0x53bda402u, 0x09a1d805u, 0x3339d808u, 0x299d7d48u, 0x73eda753u
// 1 in Montgomery form (R mod r)
#define FR_ONE_LIMBS 0xfffffffeu, 0x00000001u, 0x00034802u, 0x5884b7fau, 0xecbc4ff5u, 0x998c4fefu, 0xacc5056fu, 0x1824b159u
// R^2 mod r (to_mont(a) = mont_mul(a, R2))
#define FR_R2_LIMBS 0xf3f29c6du, 0xc999e990u, 0x87925c23u, 0x2b6cedcbu, 0x7254398fu, 0x05d31496u, 0x9f59ff11u, 0x0748d9d9u
// primitive 2^32-th root of unity 7^((r-1)/2^32) (ff Scalar::ROOT_OF_UNITY), Montgomery form
#define FR_ROOT_OF_UNITY_LIMBS 0x5f0e466au, 0xb9b58d8cu, 0x1819d7ecu, 0x5b1b4c80u, 0x52a31e64u, 0x0af53ae3u, 0x19e9b27bu, 0x5bf3addau
// its inverse (ff Scalar::ROOT_OF_UNITY_INV), Montgomery form
#define FR_ROOT_OF_UNITY_INV_LIMBS 0xdcf3219au, 0x4256481au, 0x96b6cad3u, 0x45f37b7fu, 0x5f7a3b27u, 0xf9c3f1d7u, 0x658afd43u, 0x2d2fc049u
// multiplicative generator 7 (ff Scalar::MULTIPLICATIVE_GENERATOR), Montgomery form: the coset shift
#define FR_GENERATOR_LIMBS 0xfffffff1u, 0x0000000eu, 0x00189c0fu, 0x17e363d3u, 0x6f8457b0u, 0xff9c5787u, 0x8fc5a8c4u, 0x35133220u
// 1/7, Montgomery form
#define FR_GENERATOR_INV_LIMBS 0xdb6db6dcu, 0xdb6db6dau, 0xdb6cc6dau, 0xe6b5824au, 0x05810db9u, 0xf8b356e0u, 0x60ec4796u, 0x66d0f1e6u
// r - 2 (the Fermat inversion exponent)
#define FR_MODULUS_MINUS_2_LIMBS 0xffffffffu, 0xfffffffeu, 0xfffe5bfeu, 0x53bda402u, 0x09a1d805u, 0x3339d808u, 0x299d7d48u, 0x73eda753u
// -r^-1 mod 2^32 (Montgomery reduction factor)
#define FR_M0 0xffffffffu
// 2-adicity of r - 1 (ff Scalar::S)
#define FR_TWO_ADICITY 32u

// ---- Fp (base field, 381 bits, 12 limbs) ----
// p
#define FP_MODULUS_LIMBS 0xffffaaabu, 0xb9feffffu, 0xb153ffffu, 0x1eabfffeu, 0xf6b0f624u, 0x6730d2a0u, 0xf38512bfu, 0x64774b84u, 0x434bacd7u, 0x4b1ba7b6u, 0x397fe69au, 0x1a0111eau
// 1 in Montgomery form (R mod p)
#define FP_ONE_LIMBS 0x0002fffdu, 0x76090000u, 0xc40c0002u, 0xebf4000bu, 0x53c758bau, 0x5f489857u, 0x70525745u, 0x77ce5853u, 0xa256ec6du, 0x5c071a97u, 0xfa80e493u, 0x15f65ec3u
// R^2 mod p
#define FP_R2_LIMBS 0x1c341746u, 0xf4df1f34u, 0x09d104f1u, 0x0a76e6a6u, 0x4c95b6d5u, 0x8de5476cu, 0x939d83c0u, 0x67eb88a9u, 0xb519952du, 0x9a793e85u, 0x92cae3aau, 0x11988fe5u
// p - 2 (the Fermat inversion exponent)
#define FP_MODULUS_MINUS_2_LIMBS 0xffffaaa9u, 0xb9feffffu, 0xb153ffffu, 0x1eabfffeu, 0xf6b0f624u, 0x6730d2a0u, 0xf38512bfu, 0x64774b84u, 0x434bacd7u, 0x4b1ba7b6u, 0x397fe69au, 0x1a0111eau
// -p^-1 mod 2^32
#define FP_M0 0xfffcfffdu
// curve constant b = 4 of G1 (y^2 = x^3 + 4), Montgomery form
#define FP_B_G1_LIMBS 0x000cfff3u, 0xaa270000u, 0xfc34000au, 0x53cc0032u, 0x6b0a807fu, 0x478fe97au, 0xe6ba24d7u, 0xb1d37ebeu, 0xbf78ab2fu, 0x8ec9733bu, 0x3d83de7eu, 0x09d64551u
