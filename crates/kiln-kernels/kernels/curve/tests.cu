// kiln-kernels: testing
// GPU test entry points for the curve layer (module "curve_tests"). One batch kernel per
// group: out[i] = op(a[i], b[i], c[i]) with a, b Jacobian (blstrs G1Projective/G2Projective
// bytes), c affine (G1Affine/G2Affine bytes), out Jacobian (compared as group elements).
// XYZZ inputs are made on the device with jacobian_to_xyzz (zz = Z^2, so not normalised)
// and results leave through xyzz_to_jacobian. Op codes (crates/kiln-field/src/gpu.rs, `CurveOp`):
//   0 xyzz_add_affine(a, c)  1 xyzz_add(a, b)  2 xyzz_dbl(a)  3 xyzz_neg(a)  4 affine_neg(c)
//   5 jacobian_add(a, b)     6 jacobian_dbl(a) 7 jacobian_neg(a)  8 affine_to_xyzz(c)
//   9 xyzz_add_affine(a, c) repeated: acc = a; acc += c; acc += c (two in a row, exercising
//     the state after a mixed add)
#define KILN_FIELD_NOINLINE
#include "curve/g1.cuh"
#include "curve/g2.cuh"

template <class F>
__device__ __forceinline__ jacobian_t<F> affine_as_jacobian(const affine_t<F>& p) {
    if (kiln_curve::affine_is_zero(p)) return kiln_curve::jacobian_zero<F>();
    return jacobian_t<F>{p.x, p.y, F::one()};
}

template <class F>
__device__ __forceinline__ bool curve_op(const jacobian_t<F>& a, const jacobian_t<F>& b, const affine_t<F>& c,
                                         jacobian_t<F>& out, uint32_t op) {
    using namespace kiln_curve;
    switch (op) {
        case 0: { xyzz_t<F> acc = jacobian_to_xyzz(a); xyzz_add_affine(acc, c); out = xyzz_to_jacobian(acc); return true; }
        case 1: { xyzz_t<F> acc = jacobian_to_xyzz(a); xyzz_add(acc, jacobian_to_xyzz(b)); out = xyzz_to_jacobian(acc); return true; }
        case 2: { xyzz_t<F> acc = jacobian_to_xyzz(a); xyzz_dbl(acc); out = xyzz_to_jacobian(acc); return true; }
        case 3: out = xyzz_to_jacobian(xyzz_neg(jacobian_to_xyzz(a))); return true;
        case 4: out = affine_as_jacobian(affine_neg(c)); return true;
        case 5: out = jacobian_add(a, b); return true;
        case 6: out = jacobian_dbl(a); return true;
        case 7: out = jacobian_neg(a); return true;
        case 8: out = xyzz_to_jacobian(affine_to_xyzz(c)); return true;
        case 9: { xyzz_t<F> acc = jacobian_to_xyzz(a); xyzz_add_affine(acc, c); xyzz_add_affine(acc, c); out = xyzz_to_jacobian(acc); return true; }
        default: return false;  // out keeps its poison
    }
}

extern "C" __global__ void g1_op(const g1_jacobian_t* a, const g1_jacobian_t* b, const g1_affine_t* c,
                                 g1_jacobian_t* out, uint32_t n, uint32_t op) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    g1_jacobian_t r;
    if (curve_op<FpOps>(a[i], b[i], c[i], r, op)) out[i] = r;
}

extern "C" __global__ void g2_op(const g2_jacobian_t* a, const g2_jacobian_t* b, const g2_affine_t* c,
                                 g2_jacobian_t* out, uint32_t n, uint32_t op) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    g2_jacobian_t r;
    if (curve_op<Fp2Ops>(a[i], b[i], c[i], r, op)) out[i] = r;
}

// Batch to-affine: thread t converts in[t*chunk .. min(n, (t+1)*chunk)). With via_xyzz != 0
// the points first go to XYZZ (tmp) and through xyzz_batch_to_affine, else through
// jacobian_batch_to_affine. scratch and tmp hold n elements.
template <class F>
__device__ __forceinline__ void batch_to_affine(const jacobian_t<F>* in, affine_t<F>* out, xyzz_t<F>* tmp,
                                                typename F::T* scratch, uint32_t n, uint32_t chunk,
                                                uint32_t via_xyzz) {
    uint64_t t = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    uint64_t start = t * chunk;
    if (start >= n) return;
    uint32_t len = (uint32_t)(start + chunk <= n ? chunk : n - start);
    if (via_xyzz) {
        for (uint32_t k = 0; k < len; k++) tmp[start + k] = kiln_curve::jacobian_to_xyzz(in[start + k]);
        kiln_curve::xyzz_batch_to_affine(tmp + start, out + start, scratch + start, len);
    } else {
        kiln_curve::jacobian_batch_to_affine(in + start, out + start, scratch + start, len);
    }
}

extern "C" __global__ void g1_batch_to_affine(const g1_jacobian_t* in, g1_affine_t* out, g1_xyzz_t* tmp,
                                              fp_t* scratch, uint32_t n, uint32_t chunk, uint32_t via_xyzz) {
    batch_to_affine<FpOps>(in, out, tmp, scratch, n, chunk, via_xyzz);
}

extern "C" __global__ void g2_batch_to_affine(const g2_jacobian_t* in, g2_affine_t* out, g2_xyzz_t* tmp,
                                              fp2_t* scratch, uint32_t n, uint32_t chunk, uint32_t via_xyzz) {
    batch_to_affine<Fp2Ops>(in, out, tmp, scratch, n, chunk, via_xyzz);
}
