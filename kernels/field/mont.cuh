// Generic Montgomery arithmetic over N 32-bit limbs, shared by Fr (N = 8) and Fp (N = 12).
//
// A parameter class P supplies: `N`, the element type `T` (a struct with `uint32_t limb[N]`),
// `m0()` (= -m^-1 mod 2^32), `mod(i)`, `one(i)`, `r2(i)` (limb i of m, R mod m, R^2 mod m; called
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

// Montgomery product a * b / R mod m: CIOS (coarsely integrated operand scanning) with the
// running sum t kept in two arrays, so that the low and high words of each 32x32-bit product
// sit next to each other in one carry chain:
//   t = sum_k ev[k]·2^(32k) + sum_k od[k]·2^(32(k+1)),
// where ev takes the products of the even limbs of a (and of m) and od those of the odd
// limbs. A `mad.lo.cc; madc.hi.cc` pair on adjacent limbs of one array becomes a single
// IMAD.WIDE.U32(.X) in SASS, with the carry between pairs kept in the flag: no separate
// high-word multiply and no IADD3.X to move carries (sm_90, a 12-limb product: ~1220 SASS
// instructions with one array and separate lo/hi chains, ~400 with this layout).
//
// Each row adds a·b_i and q·m (q making t ≡ 0 mod 2^32), then divides by 2^32. After the
// division the two arrays trade places: od (positions 1..N) becomes the new ev (positions
// 0..N-1) and ev[2..N] the new od; ev[1], which lands on position 0, is the `spill`, added
// to the new ev[0] at the start of the next row with its carry passed straight into the od
// chain (od[0] is position 1).
//
// Bounds (m < 2^(32N-1), as in the textbook CIOS): t < 2m at the start of each row and
// t < 2^(32N+32) before the division, and ev, od and spill are non-negative parts of t.
// So od·2^32 <= t gives od < 2^(32N): od's chains never carry out of od[N-1]; ev needs one
// extra limb ev[N] for its carries. At the end t < 2m < 2^(32N) and one conditional
// subtraction finishes.
template <class P>
KILN_DEV typename P::T mul(const typename P::T& x, const typename P::T& y) {
    constexpr int N = P::N;
    static_assert(N % 2 == 0, "mul pairs limbs: N must be even");
    const uint32_t* a = x.limb;
    const uint32_t* b = y.limb;
    uint32_t ev[N + 1], od[N], spill = 0;

#pragma unroll
    for (int i = 0; i < N; i++) {
        uint32_t bi = b[i];
        if (i == 0) {
            // t = a·b_0.
#pragma unroll
            for (int j = 0; j < N; j += 2) {
                ev[j] = mul_lo(a[j], bi);
                ev[j + 1] = mul_hi(a[j], bi);
                od[j] = mul_lo(a[j + 1], bi);
                od[j + 1] = mul_hi(a[j + 1], bi);
            }
            ev[N] = 0;
        } else {
            // t += spill + a·b_i. ev[N] and od[N-1] are 0 here (fresh after the swap).
            ev[0] = add_cc(ev[0], spill);
#pragma unroll
            for (int j = 0; j < N - 2; j += 2) {
                od[j] = madc_lo_cc(a[j + 1], bi, od[j]);
                od[j + 1] = madc_hi_cc(a[j + 1], bi, od[j + 1]);
            }
            od[N - 2] = madc_lo_cc(a[N - 1], bi, od[N - 2]);
            od[N - 1] = madc_hi(a[N - 1], bi, od[N - 1]);
            ev[0] = mad_lo_cc(a[0], bi, ev[0]);
            ev[1] = madc_hi_cc(a[0], bi, ev[1]);
#pragma unroll
            for (int j = 2; j < N; j += 2) {
                ev[j] = madc_lo_cc(a[j], bi, ev[j]);
                ev[j + 1] = madc_hi_cc(a[j], bi, ev[j + 1]);
            }
            ev[N] = addc(0, 0);
        }
        // t += q·m, q = t·(-m^-1) mod 2^32: afterwards ev[0] = 0.
        uint32_t q = mul_lo(ev[0], P::m0());
        ev[0] = mad_lo_cc(q, P::mod(0), ev[0]);
        ev[1] = madc_hi_cc(q, P::mod(0), ev[1]);
#pragma unroll
        for (int j = 2; j < N; j += 2) {
            ev[j] = madc_lo_cc(q, P::mod(j), ev[j]);
            ev[j + 1] = madc_hi_cc(q, P::mod(j), ev[j + 1]);
        }
        ev[N] = addc(ev[N], 0);
        od[0] = mad_lo_cc(q, P::mod(1), od[0]);
        od[1] = madc_hi_cc(q, P::mod(1), od[1]);
#pragma unroll
        for (int j = 2; j < N - 2; j += 2) {
            od[j] = madc_lo_cc(q, P::mod(j + 1), od[j]);
            od[j + 1] = madc_hi_cc(q, P::mod(j + 1), od[j + 1]);
        }
        od[N - 2] = madc_lo_cc(q, P::mod(N - 1), od[N - 2]);
        od[N - 1] = madc_hi(q, P::mod(N - 1), od[N - 1]);
        // t /= 2^32: swap the arrays' roles (see above).
        spill = ev[1];
        uint32_t next_od[N];
#pragma unroll
        for (int k = 0; k < N - 1; k++) next_od[k] = ev[k + 2];
        next_od[N - 1] = 0;
#pragma unroll
        for (int k = 0; k < N; k++) ev[k] = od[k];
        ev[N] = 0;
#pragma unroll
        for (int k = 0; k < N; k++) od[k] = next_od[k];
    }
    // t = spill + ev + od·2^32 (< 2m < 2^(32N): no carry out).
    typename P::T r;
    r.limb[0] = add_cc(ev[0], spill);
#pragma unroll
    for (int k = 1; k < N - 1; k++) r.limb[k] = addc_cc(ev[k], od[k - 1]);
    r.limb[N - 1] = addc(ev[N - 1], od[N - 2]);
    reduce_once<P>(r.limb);
    return r;
}

// Montgomery square. A dedicated squaring (cross products once, doubled) needs fewer
// multiplies, but its carry chains cannot pair low and high words the way `mul` does: it
// compiled to ~970 SASS instructions per Fp square against ~400 for mul(a, a). So a square is
// a product until a squaring with paired chains beats it.
template <class P>
KILN_DEV typename P::T sqr(const typename P::T& x) {
    return mul<P>(x, x);
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
