// Short-Weierstrass point arithmetic for y^2 = x^3 + b (a = 0), written once over a field
// table F (FpOps for G1, Fp2Ops for G2; see field/fp2.cuh). b never appears in these
// formulas, so the same code serves both groups.
//
// Coordinates:
// - affine_t {x, y}: blst_p1_affine / blst_p2_affine; the point at infinity is all zeros
//   (no valid point has x = y = 0 since b != 0).
// - jacobian_t {x, y, z}: blst_p1 / blst_p2 (= blstrs G1Projective / G2Projective),
//   x = X/Z^2, y = Y/Z^3; z = 0 is infinity.
// - xyzz_t {x, y, zz, zzz}: x = X/ZZ, y = Y/ZZZ with ZZ^3 = ZZZ^2; zz = 0 is infinity.
//   The cheapest mixed addition (10 products incl. squarings), used by the MSM buckets.
// Formulas: the "xyzz" and "jacobian" pages of the Explicit-Formulas Database
// (madd-2008-s, mdbl-2008-s, add-2008-s, dbl-2008-s-1, add-2007-bl, dbl-2009-l),
// with the exceptional cases (infinity, P + P, P + (-P)) handled explicitly.
#pragma once
#include "field/fp2.cuh"

template <class F>
struct alignas(8) affine_t {
    typename F::T x, y;
};
template <class F>
struct alignas(8) jacobian_t {
    typename F::T x, y, z;
};
template <class F>
struct alignas(8) xyzz_t {
    typename F::T x, y, zz, zzz;
};

namespace kiln_curve {

template <class F>
KILN_DEV xyzz_t<F> xyzz_zero() {
    return xyzz_t<F>{F::zero(), F::zero(), F::zero(), F::zero()};
}
// Infinity in Jacobian coordinates: all zeros, as blstrs' G1Projective::identity().
template <class F>
KILN_DEV jacobian_t<F> jacobian_zero() {
    return jacobian_t<F>{F::zero(), F::zero(), F::zero()};
}
template <class F>
KILN_DEV bool xyzz_is_zero(const xyzz_t<F>& p) {
    return F::is_zero(p.zz);
}
template <class F>
KILN_DEV bool affine_is_zero(const affine_t<F>& p) {
    return F::is_zero(p.x) && F::is_zero(p.y);
}
template <class F>
KILN_DEV bool jacobian_is_zero(const jacobian_t<F>& p) {
    return F::is_zero(p.z);
}
template <class F>
KILN_DEV xyzz_t<F> affine_to_xyzz(const affine_t<F>& p) {
    if (affine_is_zero(p)) return xyzz_zero<F>();
    return xyzz_t<F>{p.x, p.y, F::one(), F::one()};
}

// 2 * (x, y) for an affine point (mdbl-2008-s). y = 0 (order 2, absent from these
// prime-order groups) would give zz = 0, i.e. infinity, which is also right.
template <class F>
KILN_DEV xyzz_t<F> affine_dbl_to_xyzz(const typename F::T& x, const typename F::T& y) {
    typename F::T u = F::dbl(y);
    typename F::T v = F::sqr(u);
    typename F::T w = F::mul(u, v);
    typename F::T s = F::mul(x, v);
    typename F::T xx = F::sqr(x);
    typename F::T m = F::add(F::dbl(xx), xx);
    xyzz_t<F> r;
    r.x = F::sub(F::sqr(m), F::dbl(s));
    r.y = F::sub(F::mul(m, F::sub(s, r.x)), F::mul(w, y));
    r.zz = v;
    r.zzz = w;
    return r;
}

// acc = 2 * acc (dbl-2008-s-1). Infinity stays infinity (zz = 0 makes zz3 = 0).
template <class F>
KILN_DEV void xyzz_dbl(xyzz_t<F>& acc) {
    typename F::T u = F::dbl(acc.y);
    typename F::T v = F::sqr(u);
    typename F::T w = F::mul(u, v);
    typename F::T s = F::mul(acc.x, v);
    typename F::T xx = F::sqr(acc.x);
    typename F::T m = F::add(F::dbl(xx), xx);
    typename F::T x3 = F::sub(F::sqr(m), F::dbl(s));
    typename F::T y3 = F::sub(F::mul(m, F::sub(s, x3)), F::mul(w, acc.y));
    acc.zz = F::mul(v, acc.zz);
    acc.zzz = F::mul(w, acc.zzz);
    acc.x = x3;
    acc.y = y3;
    if (F::is_zero(acc.zz)) acc = xyzz_zero<F>();
}

// acc += p, p affine (madd-2008-s): 8 products + 2 squarings in the general case.
template <class F>
KILN_DEV void xyzz_add_affine(xyzz_t<F>& acc, const affine_t<F>& p) {
    if (affine_is_zero(p)) return;
    if (xyzz_is_zero(acc)) {
        acc = xyzz_t<F>{p.x, p.y, F::one(), F::one()};
        return;
    }
    typename F::T u2 = F::mul(p.x, acc.zz);
    typename F::T s2 = F::mul(p.y, acc.zzz);
    typename F::T pp_ = F::sub(u2, acc.x);  // P
    typename F::T r = F::sub(s2, acc.y);    // R
    if (F::is_zero(pp_)) {
        // Same x: either acc == p (double p) or acc == -p (infinity).
        acc = F::is_zero(r) ? affine_dbl_to_xyzz<F>(p.x, p.y) : xyzz_zero<F>();
        return;
    }
    typename F::T pp = F::sqr(pp_);
    typename F::T ppp = F::mul(pp_, pp);
    typename F::T q = F::mul(acc.x, pp);
    typename F::T x3 = F::sub(F::sub(F::sqr(r), ppp), F::dbl(q));
    typename F::T y3 = F::sub(F::mul(r, F::sub(q, x3)), F::mul(acc.y, ppp));
    acc.zz = F::mul(acc.zz, pp);
    acc.zzz = F::mul(acc.zzz, ppp);
    acc.x = x3;
    acc.y = y3;
}

// acc += p, both XYZZ (add-2008-s): 12 products + 2 squarings in the general case.
template <class F>
KILN_DEV void xyzz_add(xyzz_t<F>& acc, const xyzz_t<F>& p) {
    if (xyzz_is_zero(p)) return;
    if (xyzz_is_zero(acc)) {
        acc = p;
        return;
    }
    typename F::T u1 = F::mul(acc.x, p.zz);
    typename F::T u2 = F::mul(p.x, acc.zz);
    typename F::T s1 = F::mul(acc.y, p.zzz);
    typename F::T s2 = F::mul(p.y, acc.zzz);
    typename F::T pp_ = F::sub(u2, u1);
    typename F::T r = F::sub(s2, s1);
    if (F::is_zero(pp_)) {
        if (F::is_zero(r)) {
            xyzz_dbl<F>(acc);
        } else {
            acc = xyzz_zero<F>();
        }
        return;
    }
    typename F::T pp = F::sqr(pp_);
    typename F::T ppp = F::mul(pp_, pp);
    typename F::T q = F::mul(u1, pp);
    typename F::T x3 = F::sub(F::sub(F::sqr(r), ppp), F::dbl(q));
    typename F::T y3 = F::sub(F::mul(r, F::sub(q, x3)), F::mul(s1, ppp));
    acc.zz = F::mul(F::mul(acc.zz, p.zz), pp);
    acc.zzz = F::mul(F::mul(acc.zzz, p.zzz), ppp);
    acc.x = x3;
    acc.y = y3;
}

template <class F>
KILN_DEV xyzz_t<F> xyzz_neg(const xyzz_t<F>& p) {
    return xyzz_t<F>{p.x, F::neg(p.y), p.zz, p.zzz};
}
template <class F>
KILN_DEV affine_t<F> affine_neg(const affine_t<F>& p) {
    return affine_t<F>{p.x, F::neg(p.y)};  // neg(0) = 0 keeps infinity all zeros
}
template <class F>
KILN_DEV jacobian_t<F> jacobian_neg(const jacobian_t<F>& p) {
    return jacobian_t<F>{p.x, F::neg(p.y), p.z};
}

// (X, Y, ZZ, ZZZ) -> Jacobian with Z = ZZ*ZZZ: X' = X*ZZ*ZZZ^2, Y' = Y*ZZ^3*ZZZ^2
// (x = X'/Z^2 = X/ZZ, y = Y'/Z^3 = Y/ZZZ, without relying on ZZ^3 = ZZZ^2).
template <class F>
KILN_DEV jacobian_t<F> xyzz_to_jacobian(const xyzz_t<F>& p) {
    if (xyzz_is_zero(p)) return jacobian_zero<F>();
    typename F::T zzz2 = F::sqr(p.zzz);
    typename F::T zz2 = F::sqr(p.zz);
    typename F::T zz3 = F::mul(zz2, p.zz);
    jacobian_t<F> r;
    r.x = F::mul(F::mul(p.x, p.zz), zzz2);
    r.y = F::mul(F::mul(p.y, zz3), zzz2);
    r.z = F::mul(p.zz, p.zzz);
    return r;
}

template <class F>
KILN_DEV xyzz_t<F> jacobian_to_xyzz(const jacobian_t<F>& p) {
    if (jacobian_is_zero(p)) return xyzz_zero<F>();
    typename F::T zz = F::sqr(p.z);
    return xyzz_t<F>{p.x, p.y, zz, F::mul(zz, p.z)};
}

// 2 * p, Jacobian (dbl-2009-l). Infinity (z = 0) stays infinity.
template <class F>
KILN_DEV jacobian_t<F> jacobian_dbl(const jacobian_t<F>& p) {
    typename F::T a = F::sqr(p.x);
    typename F::T b = F::sqr(p.y);
    typename F::T c = F::sqr(b);
    typename F::T d = F::dbl(F::sub(F::sub(F::sqr(F::add(p.x, b)), a), c));
    typename F::T e = F::add(F::dbl(a), a);
    typename F::T f = F::sqr(e);
    jacobian_t<F> r;
    r.x = F::sub(f, F::dbl(d));
    typename F::T c8 = F::dbl(F::dbl(F::dbl(c)));
    r.y = F::sub(F::mul(e, F::sub(d, r.x)), c8);
    r.z = F::dbl(F::mul(p.y, p.z));
    return r;
}

// p + q, Jacobian (add-2007-bl), with the exceptional cases.
template <class F>
KILN_DEV jacobian_t<F> jacobian_add(const jacobian_t<F>& p, const jacobian_t<F>& q) {
    if (jacobian_is_zero(p)) return q;
    if (jacobian_is_zero(q)) return p;
    typename F::T z1z1 = F::sqr(p.z);
    typename F::T z2z2 = F::sqr(q.z);
    typename F::T u1 = F::mul(p.x, z2z2);
    typename F::T u2 = F::mul(q.x, z1z1);
    typename F::T s1 = F::mul(F::mul(p.y, q.z), z2z2);
    typename F::T s2 = F::mul(F::mul(q.y, p.z), z1z1);
    typename F::T h = F::sub(u2, u1);
    typename F::T rr = F::sub(s2, s1);
    if (F::is_zero(h)) {
        if (F::is_zero(rr)) return jacobian_dbl<F>(p);
        return jacobian_zero<F>();
    }
    typename F::T i = F::sqr(F::dbl(h));
    typename F::T j = F::mul(h, i);
    typename F::T r = F::dbl(rr);
    typename F::T v = F::mul(u1, i);
    jacobian_t<F> o;
    o.x = F::sub(F::sub(F::sqr(r), j), F::dbl(v));
    o.y = F::sub(F::mul(r, F::sub(v, o.x)), F::dbl(F::mul(s1, j)));
    o.z = F::mul(F::sub(F::sub(F::sqr(F::add(p.z, q.z)), z1z1), z2z2), h);
    return o;
}

// Batch conversion to affine by one thread over in[0..n) (Montgomery's trick: one
// inversion and ~3 products per point). `scratch` holds n field elements (prefix
// products). Points at infinity become all-zero affine points and are skipped in the
// product. The denominator of an XYZZ point is ZZ*ZZZ: 1/ZZ = ZZZ/(ZZ*ZZZ), 1/ZZZ = ZZ/(ZZ*ZZZ).
template <class F>
KILN_DEV void xyzz_batch_to_affine(const xyzz_t<F>* in, affine_t<F>* out, typename F::T* scratch, uint32_t n) {
    typename F::T acc = F::one();
    for (uint32_t i = 0; i < n; i++) {
        xyzz_t<F> p = in[i];
        if (!xyzz_is_zero(p)) acc = F::mul(acc, F::mul(p.zz, p.zzz));
        scratch[i] = acc;
    }
    typename F::T inv = F::inv(acc);  // inverse of the product of all nonzero denominators
    for (uint32_t k = n; k-- > 0;) {
        xyzz_t<F> p = in[k];
        if (xyzz_is_zero(p)) {
            out[k] = affine_t<F>{F::zero(), F::zero()};
            continue;
        }
        typename F::T before = k > 0 ? scratch[k - 1] : F::one();
        typename F::T d_inv = F::mul(inv, before);   // 1 / (zz * zzz)
        inv = F::mul(inv, F::mul(p.zz, p.zzz));       // drop this point from the running inverse
        typename F::T zz_inv = F::mul(d_inv, p.zzz);
        typename F::T zzz_inv = F::mul(d_inv, p.zz);
        out[k] = affine_t<F>{F::mul(p.x, zz_inv), F::mul(p.y, zzz_inv)};
    }
}

// Same for Jacobian points (denominator Z: x = X/Z^2, y = Y/Z^3).
template <class F>
KILN_DEV void jacobian_batch_to_affine(const jacobian_t<F>* in, affine_t<F>* out, typename F::T* scratch,
                                       uint32_t n) {
    typename F::T acc = F::one();
    for (uint32_t i = 0; i < n; i++) {
        if (!F::is_zero(in[i].z)) acc = F::mul(acc, in[i].z);
        scratch[i] = acc;
    }
    typename F::T inv = F::inv(acc);
    for (uint32_t k = n; k-- > 0;) {
        jacobian_t<F> p = in[k];
        if (F::is_zero(p.z)) {
            out[k] = affine_t<F>{F::zero(), F::zero()};
            continue;
        }
        typename F::T before = k > 0 ? scratch[k - 1] : F::one();
        typename F::T z_inv = F::mul(inv, before);
        inv = F::mul(inv, p.z);
        typename F::T z2 = F::sqr(z_inv);
        out[k] = affine_t<F>{F::mul(p.x, z2), F::mul(p.y, F::mul(z2, z_inv))};
    }
}

}  // namespace kiln_curve
