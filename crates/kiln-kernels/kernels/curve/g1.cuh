// G1 (over Fp): g1_affine_t = blst_p1_affine (96 bytes), g1_jacobian_t = blst_p1 = blstrs G1Projective (144 bytes),
// g1_xyzz_t for MSM buckets. Thin names over the shared formulas in curve/curve.cuh.
#pragma once
#include "curve/curve.cuh"

using g1_affine_t = affine_t<FpOps>;
using g1_jacobian_t = jacobian_t<FpOps>;
using g1_xyzz_t = xyzz_t<FpOps>;

KILN_DEV g1_xyzz_t g1_xyzz_zero() { return kiln_curve::xyzz_zero<FpOps>(); }
KILN_DEV g1_jacobian_t g1_jacobian_zero() { return kiln_curve::jacobian_zero<FpOps>(); }
KILN_DEV bool g1_xyzz_is_zero(const g1_xyzz_t& p) { return kiln_curve::xyzz_is_zero(p); }
KILN_DEV bool g1_affine_is_zero(const g1_affine_t& p) { return kiln_curve::affine_is_zero(p); }
KILN_DEV bool g1_jacobian_is_zero(const g1_jacobian_t& p) { return kiln_curve::jacobian_is_zero(p); }
// acc += p (p affine). Handles acc = inf, p = inf, acc == p, acc == -p.
KILN_DEV void g1_xyzz_add_affine(g1_xyzz_t& acc, const g1_affine_t& p) { kiln_curve::xyzz_add_affine(acc, p); }
// acc += p (both XYZZ), same edge cases.
KILN_DEV void g1_xyzz_add(g1_xyzz_t& acc, const g1_xyzz_t& p) { kiln_curve::xyzz_add(acc, p); }
KILN_DEV void g1_xyzz_dbl(g1_xyzz_t& acc) { kiln_curve::xyzz_dbl(acc); }
KILN_DEV g1_xyzz_t g1_xyzz_neg(const g1_xyzz_t& p) { return kiln_curve::xyzz_neg(p); }
KILN_DEV g1_affine_t g1_affine_neg(const g1_affine_t& p) { return kiln_curve::affine_neg(p); }
KILN_DEV g1_jacobian_t g1_jacobian_neg(const g1_jacobian_t& p) { return kiln_curve::jacobian_neg(p); }
KILN_DEV g1_xyzz_t g1_affine_to_xyzz(const g1_affine_t& p) { return kiln_curve::affine_to_xyzz(p); }
KILN_DEV g1_jacobian_t g1_xyzz_to_jacobian(const g1_xyzz_t& p) { return kiln_curve::xyzz_to_jacobian(p); }
KILN_DEV g1_xyzz_t g1_jacobian_to_xyzz(const g1_jacobian_t& p) { return kiln_curve::jacobian_to_xyzz(p); }
KILN_DEV g1_jacobian_t g1_jacobian_add(const g1_jacobian_t& p, const g1_jacobian_t& q) {
    return kiln_curve::jacobian_add(p, q);
}
KILN_DEV g1_jacobian_t g1_jacobian_dbl(const g1_jacobian_t& p) { return kiln_curve::jacobian_dbl(p); }
// One thread converts in[0..n) to affine with one inversion (scratch: n elements).
KILN_DEV void g1_xyzz_batch_to_affine(const g1_xyzz_t* in, g1_affine_t* out, fp_t* scratch, uint32_t n) {
    kiln_curve::xyzz_batch_to_affine(in, out, scratch, n);
}
KILN_DEV void g1_jacobian_batch_to_affine(const g1_jacobian_t* in, g1_affine_t* out, fp_t* scratch, uint32_t n) {
    kiln_curve::jacobian_batch_to_affine(in, out, scratch, n);
}
