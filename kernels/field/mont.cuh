// Generic Montgomery arithmetic over N 32-bit limbs, shared by Fr (N = 8) and Fp (N = 12).
//
// A parameter class P supplies: `N`, the element type `T` (a struct with `uint32_t limb[N]`),
// `M0` (= -m^-1 mod 2^32), `mod(i)`, `one(i)`, `r2(i)` (limb i of m, R mod m, R^2 mod m; called
// with compile-time i after unrolling, so they fold into immediates) and `inv_exp(i)` (limb i of
// m - 2, read with a run-time index from __constant__ memory).
//
// Every value is kept fully reduced (< m), so equality is limb equality and the bytes match blst.
// Both moduli leave at least one spare bit (r < 2^255, p < 2^381), which the bounds below use.
#pragma once
#include "field/ptx.cuh"

namespace kiln_mont {

using namespace kiln_ptx;

// out = t - m if t >= m, else t. t < 2m.
template <class P>
KILN_DEV void reduce_once(uint32_t (&t)[P::N]) {
    constexpr int N = P::N;
    uint32_t s[N];
    s[0] = sub_cc(t[0], P::mod(0));
#pragma unroll
    for (int j = 1; j < N; j++) s[j] = subc_cc(t[j], P::mod(j));
    uint32_t borrow = subc(0, 0);  // 0xffffffff if t < m
#pragma unroll
    for (int j = 0; j < N; j++) t[j] = borrow ? t[j] : s[j];
}

template <class P>
KILN_DEV typename P::T add(const typename P::T& a, const typename P::T& b) {
    constexpr int N = P::N;
    typename P::T r;
    // a + b < 2m < 2^(32N): no carry out of the top limb.
    r.limb[0] = add_cc(a.limb[0], b.limb[0]);
#pragma unroll
    for (int j = 1; j < N - 1; j++) r.limb[j] = addc_cc(a.limb[j], b.limb[j]);
    r.limb[N - 1] = addc(a.limb[N - 1], b.limb[N - 1]);
    reduce_once<P>(r.limb);
    return r;
}

template <class P>
KILN_DEV typename P::T sub(const typename P::T& a, const typename P::T& b) {
    constexpr int N = P::N;
    typename P::T r;
    r.limb[0] = sub_cc(a.limb[0], b.limb[0]);
#pragma unroll
    for (int j = 1; j < N; j++) r.limb[j] = subc_cc(a.limb[j], b.limb[j]);
    uint32_t borrow = subc(0, 0);  // all ones if a < b: add m back
    r.limb[0] = add_cc(r.limb[0], P::mod(0) & borrow);
#pragma unroll
    for (int j = 1; j < N - 1; j++) r.limb[j] = addc_cc(r.limb[j], P::mod(j) & borrow);
    r.limb[N - 1] = addc(r.limb[N - 1], P::mod(N - 1) & borrow);
    return r;
}

template <class P>
KILN_DEV bool is_zero(const typename P::T& a) {
    uint32_t acc = 0;
#pragma unroll
    for (int j = 0; j < P::N; j++) acc |= a.limb[j];
    return acc == 0;
}

template <class P>
KILN_DEV bool eq(const typename P::T& a, const typename P::T& b) {
    uint32_t acc = 0;
#pragma unroll
    for (int j = 0; j < P::N; j++) acc |= a.limb[j] ^ b.limb[j];
    return acc == 0;
}

// m - a, and 0 for a = 0 (so the result stays reduced).
template <class P>
KILN_DEV typename P::T neg(const typename P::T& a) {
    constexpr int N = P::N;
    uint32_t nz = is_zero<P>(a) ? 0u : 0xffffffffu;
    typename P::T r;
    r.limb[0] = sub_cc(P::mod(0) & nz, a.limb[0]);
#pragma unroll
    for (int j = 1; j < N - 1; j++) r.limb[j] = subc_cc(P::mod(j) & nz, a.limb[j]);
    r.limb[N - 1] = subc(P::mod(N - 1) & nz, a.limb[N - 1]);
    return r;
}

// Montgomery product a * b / R mod m, CIOS (coarsely integrated operand scanning) with
// separate lo and hi carry chains per row (mad.lo.cc ... then madc.hi.cc ...), so each
// chain is one uninterrupted run of carry-propagating IMADs.
//
// Bounds: at the start of row i, t < 2m < 2^(32N) (t[N] = 0). After t += a*b_i and
// t += q*m the value is < 2m + 2(2^32-1)m < 2^(32N+32) (m < 2^(32N-1)), so N+1 limbs
// hold it and no chain carries out of t[N]; after the shift by one limb t < 2m again.
template <class P>
KILN_DEV typename P::T mul(const typename P::T& a, const typename P::T& b) {
    constexpr int N = P::N;
    uint32_t t[N + 1];

    // Row 0: t = a * b_0 (nothing to accumulate yet).
    {
        uint32_t bi = b.limb[0];
#pragma unroll
        for (int j = 0; j < N; j++) t[j] = mul_lo(a.limb[j], bi);
        t[1] = mad_hi_cc(a.limb[0], bi, t[1]);
#pragma unroll
        for (int j = 1; j < N - 1; j++) t[j + 1] = madc_hi_cc(a.limb[j], bi, t[j + 1]);
        t[N] = madc_hi(a.limb[N - 1], bi, 0);
    }
#pragma unroll
    for (int i = 0; i < N; i++) {
        if (i > 0) {
            // t += a * b_i (t[N] is 0 here)
            uint32_t bi = b.limb[i];
            t[0] = mad_lo_cc(a.limb[0], bi, t[0]);
#pragma unroll
            for (int j = 1; j < N; j++) t[j] = madc_lo_cc(a.limb[j], bi, t[j]);
            t[N] = addc(0, 0);
            t[1] = mad_hi_cc(a.limb[0], bi, t[1]);
#pragma unroll
            for (int j = 1; j < N - 1; j++) t[j + 1] = madc_hi_cc(a.limb[j], bi, t[j + 1]);
            t[N] = madc_hi(a.limb[N - 1], bi, t[N]);
        }
        // t += q * m with q chosen so that t[0] becomes 0, then t >>= 32.
        uint32_t q = mul_lo(t[0], P::M0);
        (void)mad_lo_cc(q, P::mod(0), t[0]);  // low word is 0 by construction; keep its carry
#pragma unroll
        for (int j = 1; j < N; j++) t[j] = madc_lo_cc(q, P::mod(j), t[j]);
        t[N] = addc(t[N], 0);
        t[1] = mad_hi_cc(q, P::mod(0), t[1]);
#pragma unroll
        for (int j = 1; j < N - 1; j++) t[j + 1] = madc_hi_cc(q, P::mod(j), t[j + 1]);
        t[N] = madc_hi(q, P::mod(N - 1), t[N]);
#pragma unroll
        for (int j = 0; j < N; j++) t[j] = t[j + 1];
        t[N] = 0;
    }
    typename P::T r;
#pragma unroll
    for (int j = 0; j < N; j++) r.limb[j] = t[j];
    reduce_once<P>(r.limb);
    return r;
}

// Montgomery square a * a / R mod m: the 2N-limb square with each cross product a_i·a_j
// (i < j) computed once and doubled (N(N-1) + 2N IMAD instead of 2N^2), then a Montgomery
// reduction of its low half only, as (T + Q·m) / R = T_hi + (T_lo + Q·m) / R for T = T_lo +
// T_hi·R. For N = 12: ~456 IMAD against ~588 for mul(a, a).
//
// Bounds (m < 2^(32N-1), a < m): T = a^2 < m^2 < 2^(64N), so no chain carries out of t[2N-1].
// Rows 0..i of cross products sum to < 2^(32(N+i+1)), so row i's carries stop at t[i+N].
// The reduction of T_lo (< R) runs on a sliding window of N+1 limbs as in mul: before each
// shift u + q·m < 2^(32N) + 2^32·m < 2^(32(N+1)); at the end u = (T_lo + Q·m)/R <= m and
// T_hi = floor(T/R) < m, so T_hi + u < 2m < 2^(32N) and one conditional subtraction finishes.
template <class P>
KILN_DEV typename P::T sqr(const typename P::T& x) {
    constexpr int N = P::N;
    static_assert(N >= 3, "sqr needs at least three limbs");
    const uint32_t* a = x.limb;
    uint32_t t[2 * N];
#pragma unroll
    for (int k = 0; k < 2 * N; k++) t[k] = 0;

    // Cross products: row i adds a_i * a_j (j > i) at limb i + j.
#pragma unroll
    for (int i = 0; i < N - 1; i++) {
        t[2 * i + 1] = mad_lo_cc(a[i], a[i + 1], t[2 * i + 1]);
#pragma unroll
        for (int j = i + 2; j < N; j++) t[i + j] = madc_lo_cc(a[i], a[j], t[i + j]);
        t[i + N] = addc(t[i + N], 0);  // t[i+N] is still 0 here: it takes the carry
        if (i == N - 2) {
            // One product: its high word lands on t[2N-2] = t[i+N]; no carry can leave it.
            t[i + N] = mad_hi_cc(a[i], a[N - 1], t[i + N]);
        } else {
            t[2 * i + 2] = mad_hi_cc(a[i], a[i + 1], t[2 * i + 2]);
#pragma unroll
            for (int j = i + 2; j < N - 1; j++) t[i + j + 1] = madc_hi_cc(a[i], a[j], t[i + j + 1]);
            t[i + N] = madc_hi(a[i], a[N - 1], t[i + N]);
        }
    }
    // Double the cross products (t[0] = 0, t[2N-1] = 0 before: the top bit moves into it).
    t[1] = add_cc(t[1], t[1]);
#pragma unroll
    for (int k = 2; k < 2 * N - 1; k++) t[k] = addc_cc(t[k], t[k]);
    t[2 * N - 1] = addc(0, 0);
    // Add the squares a_i^2 at limbs 2i, 2i+1: one carry chain.
    t[0] = mad_lo_cc(a[0], a[0], t[0]);
    t[1] = madc_hi_cc(a[0], a[0], t[1]);
#pragma unroll
    for (int i = 1; i < N - 1; i++) {
        t[2 * i] = madc_lo_cc(a[i], a[i], t[2 * i]);
        t[2 * i + 1] = madc_hi_cc(a[i], a[i], t[2 * i + 1]);
    }
    t[2 * N - 2] = madc_lo_cc(a[N - 1], a[N - 1], t[2 * N - 2]);
    t[2 * N - 1] = madc_hi(a[N - 1], a[N - 1], t[2 * N - 1]);

    // Reduce T_lo = t[0..N) on the window u = t[i..i+N] (u[N] = 0 at each row's start).
    uint32_t u[N + 1];
#pragma unroll
    for (int j = 0; j < N; j++) u[j] = t[j];
    u[N] = 0;
#pragma unroll
    for (int i = 0; i < N; i++) {
        uint32_t q = mul_lo(u[0], P::M0);
        (void)mad_lo_cc(q, P::mod(0), u[0]);  // low word is 0 by construction; keep its carry
#pragma unroll
        for (int j = 1; j < N; j++) u[j] = madc_lo_cc(q, P::mod(j), u[j]);
        u[N] = addc(u[N], 0);
        u[1] = mad_hi_cc(q, P::mod(0), u[1]);
#pragma unroll
        for (int j = 1; j < N - 1; j++) u[j + 1] = madc_hi_cc(q, P::mod(j), u[j + 1]);
        u[N] = madc_hi(q, P::mod(N - 1), u[N]);
#pragma unroll
        for (int j = 0; j < N; j++) u[j] = u[j + 1];
        u[N] = 0;
    }
    // r = T_hi + u (< 2m: no carry out), then one conditional subtraction.
    typename P::T r;
    r.limb[0] = add_cc(u[0], t[N]);
#pragma unroll
    for (int j = 1; j < N - 1; j++) r.limb[j] = addc_cc(u[j], t[N + j]);
    r.limb[N - 1] = addc(u[N - 1], t[2 * N - 1]);
    reduce_once<P>(r.limb);
    return r;
}

template <class P>
KILN_DEV typename P::T from_limbs_one() {
    typename P::T r;
#pragma unroll
    for (int j = 0; j < P::N; j++) r.limb[j] = P::one(j);
    return r;
}

template <class P>
KILN_DEV typename P::T to_mont(const typename P::T& a) {
    typename P::T r2;
#pragma unroll
    for (int j = 0; j < P::N; j++) r2.limb[j] = P::r2(j);
    return mul<P>(a, r2);
}

template <class P>
KILN_DEV typename P::T from_mont(const typename P::T& a) {
    typename P::T raw_one;
#pragma unroll
    for (int j = 0; j < P::N; j++) raw_one.limb[j] = j == 0 ? 1u : 0u;
    return mul<P>(a, raw_one);
}

// a^e for a small exponent, square-and-multiply from the top bit.
template <class P>
KILN_DEV typename P::T pow_u32(const typename P::T& a, uint32_t e) {
    typename P::T r = from_limbs_one<P>();
    for (int bit = 31; bit >= 0; bit--) {
        r = mul<P>(r, r);
        if ((e >> bit) & 1u) r = mul<P>(r, a);
    }
    return r;
}

// a^(m-2) = a^-1 (Fermat); 0 maps to 0. Not fast (~1.3 N*32 products): meant for one
// inversion per batch (Montgomery's trick), not per element.
template <class P>
KILN_DEV typename P::T inv(const typename P::T& a) {
    typename P::T r = from_limbs_one<P>();
#pragma unroll 1
    for (int i = P::N - 1; i >= 0; i--) {
        uint32_t e = P::inv_exp(i);
#pragma unroll 1
        for (int bit = 31; bit >= 0; bit--) {
            r = mul<P>(r, r);
            // The exponent is a constant, the same in every thread: no divergence.
            if ((e >> bit) & 1u) r = mul<P>(r, a);
        }
    }
    return r;
}

}  // namespace kiln_mont
