// kiln-kernels: testing
// Micro-benchmark kernels (module "field_bench"), driven by benches/benches/field.rs:
// long dependent chains of Montgomery products and of XYZZ mixed additions. Each thread
// keeps LANES independent chains so the scheduler has independent work (ILP) next to the
// other warps; results are written out so nothing is optimised away, and the host checks
// a sample against blstrs before timing.
// G2 adds call the Fp2 products instead of inlining ~33 Fp products each: the module
// would otherwise take minutes to compile for every engineer.
#define KILN_FP2_NOINLINE
#include "curve/g1.cuh"
#include "curve/g2.cuh"
#include "field/fr.cuh"

#define LANES 4

// out[LANES*t + k] = in[LANES*t + k] * m^iters, m = mul[t].
template <class T, T (*MUL)(const T&, const T&)>
__device__ __forceinline__ void mul_chain(const T* in, const T* mul, T* out, uint32_t threads, uint32_t iters) {
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= threads) return;
    T acc[LANES];
#pragma unroll
    for (int k = 0; k < LANES; k++) acc[k] = in[LANES * t + k];
    T m = mul[t];
#pragma unroll 1
    for (uint32_t i = 0; i < iters; i++) {
#pragma unroll
        for (int k = 0; k < LANES; k++) acc[k] = MUL(acc[k], m);
    }
#pragma unroll
    for (int k = 0; k < LANES; k++) out[LANES * t + k] = acc[k];
}

// out[LANES*t + k] = in[LANES*t + k]^(2^iters): dependent Montgomery squarings. `unused` keeps
// the signature of the product chains so the host drives both the same way.
template <class T, T (*SQR)(const T&)>
__device__ __forceinline__ void sqr_chain(const T* in, T* out, uint32_t threads, uint32_t iters) {
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= threads) return;
    T acc[LANES];
#pragma unroll
    for (int k = 0; k < LANES; k++) acc[k] = in[LANES * t + k];
#pragma unroll 1
    for (uint32_t i = 0; i < iters; i++) {
#pragma unroll
        for (int k = 0; k < LANES; k++) acc[k] = SQR(acc[k]);
    }
#pragma unroll
    for (int k = 0; k < LANES; k++) out[LANES * t + k] = acc[k];
}

__device__ __forceinline__ fp_t fp_sqr_v(const fp_t& a) { return fp_sqr(a); }

extern "C" __global__ void bench_fp_sqr(const fp_t* in, const fp_t* unused, fp_t* out, uint32_t threads,
                                        uint32_t iters) {
    (void)unused;
    sqr_chain<fp_t, fp_sqr_v>(in, out, threads, iters);
}

__device__ __forceinline__ fr_t fr_mul_v(const fr_t& a, const fr_t& b) { return fr_mul(a, b); }
__device__ __forceinline__ fp_t fp_mul_v(const fp_t& a, const fp_t& b) { return fp_mul(a, b); }

extern "C" __global__ void bench_fr_mul(const fr_t* in, const fr_t* mul, fr_t* out, uint32_t threads, uint32_t iters) {
    mul_chain<fr_t, fr_mul_v>(in, mul, out, threads, iters);
}

extern "C" __global__ void bench_fp_mul(const fp_t* in, const fp_t* mul, fp_t* out, uint32_t threads, uint32_t iters) {
    mul_chain<fp_t, fp_mul_v>(in, mul, out, threads, iters);
}

// Thread t: acc = 0; repeat iters times: for k < LANES: acc += pts[(t + k) % npts] (mixed
// XYZZ additions); out[t] = acc as Jacobian. So out[t] = iters * sum_k pts[(t + k) % npts].
template <class F>
__device__ __forceinline__ void mixed_add_chain(const affine_t<F>* pts, uint32_t npts, jacobian_t<F>* out,
                                                uint32_t threads, uint32_t iters) {
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= threads) return;
    xyzz_t<F> acc = kiln_curve::xyzz_zero<F>();
#pragma unroll 1
    for (uint32_t i = 0; i < iters; i++) {
#pragma unroll 1
        for (uint32_t k = 0; k < LANES; k++) kiln_curve::xyzz_add_affine(acc, pts[(t + k) % npts]);
    }
    out[t] = kiln_curve::xyzz_to_jacobian(acc);
}

extern "C" __global__ void bench_g1_add_affine(const g1_affine_t* pts, uint32_t npts, g1_jacobian_t* out,
                                               uint32_t threads, uint32_t iters) {
    mixed_add_chain<FpOps>(pts, npts, out, threads, iters);
}

extern "C" __global__ void bench_g2_add_affine(const g2_affine_t* pts, uint32_t npts, g2_jacobian_t* out,
                                               uint32_t threads, uint32_t iters) {
    mixed_add_chain<Fp2Ops>(pts, npts, out, threads, iters);
}
