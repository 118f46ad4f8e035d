// kiln-kernels: testing
// GPU test entry points for the field layer (module "field_tests"): one batch kernel per
// field, out[i] = op(a[i], b[i]), so the host can compare every operation with blstrs.
// Op codes (shared with crates/kiln-field/src/gpu.rs, `FieldOp`):
//   0 add  1 sub  2 neg(a)  3 dbl(a)  4 mul  5 sqr(a)  6 inv(a)  7 to_mont(a)  8 from_mont(a)
//   9 pow(a, b.limb[0])  10 eq(a, b) -> out = {eq, 0...}  11 is_zero(a) -> out = {is_zero, 0...}
#define KILN_FIELD_NOINLINE
#include "field/fp2.cuh"
#include "field/fr.cuh"

template <class T, class Z>
__device__ __forceinline__ T flag(bool b, Z zero) {
    T r = zero;
    r.limb[0] = b ? 1u : 0u;
    return r;
}

extern "C" __global__ void fr_op(const fr_t* a, const fr_t* b, fr_t* out, uint32_t n, uint32_t op) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    fr_t x = a[i], y = b[i], r;
    switch (op) {
        case 0: r = fr_add(x, y); break;
        case 1: r = fr_sub(x, y); break;
        case 2: r = fr_neg(x); break;
        case 3: r = fr_dbl(x); break;
        case 4: r = fr_mul(x, y); break;
        case 5: r = fr_sqr(x); break;
        case 6: r = fr_inv(x); break;
        case 7: r = fr_to_mont(x); break;
        case 8: r = fr_from_mont(x); break;
        case 9: r = fr_pow(x, y.limb[0]); break;
        case 10: r = flag<fr_t>(fr_eq(x, y), fr_zero()); break;
        case 11: r = flag<fr_t>(fr_is_zero(x), fr_zero()); break;
        default: return;  // out keeps its poison: the host reports the bad op code
    }
    out[i] = r;
}

extern "C" __global__ void fp_op(const fp_t* a, const fp_t* b, fp_t* out, uint32_t n, uint32_t op) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    fp_t x = a[i], y = b[i], r;
    switch (op) {
        case 0: r = fp_add(x, y); break;
        case 1: r = fp_sub(x, y); break;
        case 2: r = fp_neg(x); break;
        case 3: r = fp_dbl(x); break;
        case 4: r = fp_mul(x, y); break;
        case 5: r = fp_sqr(x); break;
        case 6: r = fp_inv(x); break;
        case 7: r = fp_to_mont(x); break;
        case 8: r = fp_from_mont(x); break;
        case 9: r = fp_pow(x, y.limb[0]); break;
        case 10: r = flag<fp_t>(fp_eq(x, y), fp_zero()); break;
        case 11: r = flag<fp_t>(fp_is_zero(x), fp_zero()); break;
        default: return;
    }
    out[i] = r;
}

extern "C" __global__ void fp2_op(const fp2_t* a, const fp2_t* b, fp2_t* out, uint32_t n, uint32_t op) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    fp2_t x = a[i], y = b[i], r;
    switch (op) {
        case 0: r = fp2_add(x, y); break;
        case 1: r = fp2_sub(x, y); break;
        case 2: r = fp2_neg(x); break;
        case 3: r = fp2_dbl(x); break;
        case 4: r = fp2_mul(x, y); break;
        case 5: r = fp2_sqr(x); break;
        case 6: r = fp2_inv(x); break;
        case 7: r = fp2_to_mont(x); break;
        case 8: r = fp2_from_mont(x); break;
        case 9: r = fp2_pow(x, y.c0.limb[0]); break;
        case 10: r = fp2_t{flag<fp_t>(fp2_eq(x, y), fp_zero()), fp_zero()}; break;
        case 11: r = fp2_t{flag<fp_t>(fp2_is_zero(x), fp_zero()), fp_zero()}; break;
        default: return;
    }
    out[i] = r;
}

// The constants as the kernels see them, for comparison with blstrs/ff:
// fr_out = [zero, one, root, root_inv, generator, generator_inv, FR_ONE table, FR_R2 (raw), FR_MODULUS (raw)],
// fp_out = [zero, one, FP_ONE table, FP_R2 (raw), FP_MODULUS (raw)].
extern "C" __global__ void field_constants(fr_t* fr_out, fp_t* fp_out) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    fr_out[0] = fr_zero();
    fr_out[1] = fr_one();
    fr_out[2] = fr_root_of_unity();
    fr_out[3] = fr_root_of_unity_inv();
    fr_out[4] = fr_generator();
    fr_out[5] = fr_generator_inv();
    fr_out[6] = fr_from_limbs(FR_ONE);
    fr_out[7] = fr_from_limbs(FR_R2);
    fr_out[8] = fr_from_limbs(FR_MODULUS);
    fp_out[0] = fp_zero();
    fp_out[1] = fp_one();
    fp_out[2] = fp_from_limbs(FP_ONE);
    fp_out[3] = fp_from_limbs(FP_R2);
    fp_out[4] = fp_from_limbs(FP_MODULUS);
}
