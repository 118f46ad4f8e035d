// G2 (over Fp2): g2_affine_t = blst_p2_affine (192 bytes), g2_jacobian_t = blst_p2 = blstrs G2Projective (288 bytes),
// g2_xyzz_t for MSM buckets. Thin names over the shared formulas in curve/curve.cuh.
#pragma once
#include "curve/curve.cuh"

using g2_affine_t = affine_t<Fp2Ops>;
using g2_jacobian_t = jacobian_t<Fp2Ops>;
using g2_xyzz_t = xyzz_t<Fp2Ops>;

KILN_DEV g2_xyzz_t g2_xyzz_zero() { return kiln_curve::xyzz_zero<Fp2Ops>(); }
KILN_DEV g2_jacobian_t g2_jacobian_zero() { return kiln_curve::jacobian_zero<Fp2Ops>(); }
KILN_DEV bool g2_xyzz_is_zero(const g2_xyzz_t& p) { return kiln_curve::xyzz_is_zero(p); }
KILN_DEV bool g2_affine_is_zero(const g2_affine_t& p) { return kiln_curve::affine_is_zero(p); }
KILN_DEV bool g2_jacobian_is_zero(const g2_jacobian_t& p) { return kiln_curve::jacobian_is_zero(p); }
// acc += p (p affine). Handles acc = inf, p = inf, acc == p, acc == -p.
KILN_DEV void g2_xyzz_add_affine(g2_xyzz_t& acc, const g2_affine_t& p) { kiln_curve::xyzz_add_affine(acc, p); }
// acc += p (both XYZZ), same edge cases.
KILN_DEV void g2_xyzz_add(g2_xyzz_t& acc, const g2_xyzz_t& p) { kiln_curve::xyzz_add(acc, p); }
KILN_DEV void g2_xyzz_dbl(g2_xyzz_t& acc) { kiln_curve::xyzz_dbl(acc); }
KILN_DEV g2_xyzz_t g2_xyzz_neg(const g2_xyzz_t& p) { return kiln_curve::xyzz_neg(p); }
KILN_DEV g2_affine_t g2_affine_neg(const g2_affine_t& p) { return kiln_curve::affine_neg(p); }
KILN_DEV g2_jacobian_t g2_jacobian_neg(const g2_jacobian_t& p) { return kiln_curve::jacobian_neg(p); }
KILN_DEV g2_xyzz_t g2_affine_to_xyzz(const g2_affine_t& p) { return kiln_curve::affine_to_xyzz(p); }
KILN_DEV g2_jacobian_t g2_xyzz_to_jacobian(const g2_xyzz_t& p) { return kiln_curve::xyzz_to_jacobian(p); }
KILN_DEV g2_xyzz_t g2_jacobian_to_xyzz(const g2_jacobian_t& p) { return kiln_curve::jacobian_to_xyzz(p); }
KILN_DEV g2_jacobian_t g2_jacobian_add(const g2_jacobian_t& p, const g2_jacobian_t& q) {
    return kiln_curve::jacobian_add(p, q);
}
KILN_DEV g2_jacobian_t g2_jacobian_dbl(const g2_jacobian_t& p) { return kiln_curve::jacobian_dbl(p); }
// One thread converts in[0..n) to affine with one inversion (scratch: n elements).
KILN_DEV void g2_xyzz_batch_to_affine(const g2_xyzz_t* in, g2_affine_t* out, fp2_t* scratch, uint32_t n) {
    kiln_curve::xyzz_batch_to_affine(in, out, scratch, n);
}
KILN_DEV void g2_jacobian_batch_to_affine(const g2_jacobian_t* in, g2_affine_t* out, fp2_t* scratch, uint32_t n) {
    kiln_curve::jacobian_batch_to_affine(in, out, scratch, n);
}
