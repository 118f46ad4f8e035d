// Generic Montgomery arithmetic over N 32-bit limbs, shared by Fr (N = 8) and Fp (N = 12).
//
// A parameter class P supplies: `N`, the element type `T` (a struct with `uint32_t limb[N]`),
// `MOD_LOW64_IS_2_64_MINUS_2_32_PLUS_1` (m's two low limbs are 1 and 2^32 - 1, as r's are: `mul`
// then reduces those limbs without multiplies),
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

// a + b < 2m, not reduced: for operands of mul_wide (any value below 2^(32N)).
template <class P>
KILN_DEV typename P::T add_unreduced(const typename P::T& a, const typename P::T& b) {
    constexpr int N = P::N;
    typename P::T r;
    // a + b < 2m < 2^(32N): no carry out of the top limb.
    r.limb[0] = add_cc(a.limb[0], b.limb[0]);
#pragma unroll
    for (int j = 1; j < N - 1; j++) r.limb[j] = addc_cc(a.limb[j], b.limb[j]);
    r.limb[N - 1] = addc(a.limb[N - 1], b.limb[N - 1]);
    return r;
}

template <class P>
KILN_DEV typename P::T add(const typename P::T& a, const typename P::T& b) {
    typename P::T r = add_unreduced<P>(a, b);
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
//
// The operands are copied whole first, as in mul_wide: read limb by limb through references
// to memory (the arguments of a non-inlined caller), ptxas split products into IMAD +
// IMAD.HI.U32 + IADD3.X.
template <class P>
KILN_DEV typename P::T mul(const typename P::T& x_, const typename P::T& y_) {
    constexpr int N = P::N;
    static_assert(N % 2 == 0, "mul pairs limbs: N must be even");
    const typename P::T x = x_, y = y_;
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
        const uint32_t t0 = ev[0];
        uint32_t q, m1_hi;
        if constexpr (P::MOD_LOW64_IS_2_64_MINUS_2_32_PLUS_1) {
            // m = 1 + (2^32 - 1)·2^32 + ... (Fr): -m^-1 = -1 mod 2^32, so q = -t0, and the two
            // low limbs' products need no multiply: q·1 = q, and q·(2^32 - 1) has low word -q
            // (= t0) and high word q - 1 (0 when q = 0). t0 + q = 0 carries exactly when
            // t0 != 0, which is also the borrow of q = 0 - t0: so m1_hi = q - borrow.
            // ALU operations instead of the two low wide products per row (docs/PERF.md, Fr
            // product). q = 0 - t0 is a subtraction from a zero read through the
            // volatile m0 (m0 + 1 = 0 here): written with a literal 0, ptxas saw q = -t0 and
            // split every product pair of the row again; as t0·m0 it cost a multiply per row,
            // in the multiplier pipe that bounds the NTT (8 of ~120 per product).
            const uint32_t zero = P::m0() + 1;
            q = sub_cc(zero, t0);  // and the borrow: t0 != 0
            m1_hi = subc(q, 0);
            ev[0] = add_cc(t0, 0xffffffffu);  // only its carry: t0 + q = 0 carries iff t0 != 0
            ev[1] = addc_cc(ev[1], 0);
        } else {
            q = mul_lo(t0, P::m0());
            ev[0] = mad_lo_cc(q, P::mod(0), t0);
            ev[1] = madc_hi_cc(q, P::mod(0), ev[1]);
        }
#pragma unroll
        for (int j = 2; j < N; j += 2) {
            ev[j] = madc_lo_cc(q, P::mod(j), ev[j]);
            ev[j + 1] = madc_hi_cc(q, P::mod(j), ev[j + 1]);
        }
        ev[N] = addc(ev[N], 0);
        if constexpr (P::MOD_LOW64_IS_2_64_MINUS_2_32_PLUS_1) {
            od[0] = add_cc(od[0], t0);
            od[1] = addc_cc(od[1], m1_hi);
        } else {
            od[0] = mad_lo_cc(q, P::mod(1), od[0]);
            od[1] = madc_hi_cc(q, P::mod(1), od[1]);
        }
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

// Unreduced products, for sums of products that need one reduction instead of one per
// product (Fp2's Karatsuba: 3 products, 2 reductions). mul_wide + redc is mul split in two.
//
// Both keep the running sum as two arrays indexed by absolute limb position k (weight
// 2^(32k)): a product whose low word lands at position k goes, with its high word at k + 1,
// into acc[k & 1]. So each array is always paired the same way ((even, odd) limbs in acc[0],
// (odd, even) in acc[1]) and every `mad.lo.cc; madc.hi.cc` pair stays one
// IMAD.WIDE.U32(.X), as in `mul`; the sum is acc[0] + acc[1].
//
// Row i adds u·v_i·2^(32i) for an N-limb u: the products of u's even limbs form one chain in
// acc[i & 1] over positions i..i+N-1, those of its odd limbs one chain in acc[~i & 1] over
// i+1..i+N. A position above every earlier row's reach (i+N) holds 0 in both arrays, so the
// first chain's carry is simply stored there, and the second chain cannot carry out: after
// row i the array is at most the whole sum, which stays below 2^(32(i+N+1)) (bounds below).

// out = x·y, 2N limbs, no reduction. Any x, y < 2^(32N): e.g. unreduced sums < 2m.
//
// The operands are copied whole first. Read limb by limb through the references (32-bit
// loads where they are in memory, e.g. the arguments of a non-inlined fp2_mul) ptxas split
// most products into IMAD + IMAD.HI.U32 + IADD3.X; the copy loads them as 64-bit pairs and
// the products stay paired (non-inlined fp2_mul, sm_90: 2000 -> 1186 SASS instructions).
template <class P>
KILN_DEV void mul_wide(uint32_t (&out)[2 * P::N], const typename P::T& x_, const typename P::T& y_) {
    constexpr int N = P::N;
    static_assert(N % 2 == 0, "mul_wide pairs limbs: N must be even");
    const typename P::T x = x_, y = y_;
    const uint32_t* a = x.limb;
    const uint32_t* b = y.limb;
    uint32_t acc[2][2 * N] = {};

#pragma unroll
    for (int i = 0; i < N; i++) {
        uint32_t bi = b[i];
        // After row i the sum is a·(b mod 2^(32(i+1))) < 2^(32(i+N+1)).
        uint32_t(&ev)[2 * N] = acc[i & 1];   // pairs of a's even limbs start at i + even
        uint32_t(&od)[2 * N] = acc[~i & 1];  // and those of its odd limbs at i + odd
        if (i == 0) {
#pragma unroll
            for (int j = 0; j < N; j += 2) {
                ev[j] = mul_lo(a[j], bi);
                ev[j + 1] = mul_hi(a[j], bi);
                od[j + 1] = mul_lo(a[j + 1], bi);
                od[j + 2] = mul_hi(a[j + 1], bi);
            }
            out[0] = ev[0];  // position 0 is final (and only in acc[0])
        } else {
            // Position i - 1 is final: fold its two parts into out and pass the carry into this
            // row's first chain (at position i), so finished positions do not sit in two arrays.
            if (i == 1) {
                ev[i] = mad_lo_cc(a[0], bi, ev[i]);
            } else {
                out[i - 1] = add_cc(ev[i - 1], od[i - 1]);
                ev[i] = madc_lo_cc(a[0], bi, ev[i]);
            }
            ev[i + 1] = madc_hi_cc(a[0], bi, ev[i + 1]);
#pragma unroll
            for (int j = 2; j < N; j += 2) {
                ev[i + j] = madc_lo_cc(a[j], bi, ev[i + j]);
                ev[i + j + 1] = madc_hi_cc(a[j], bi, ev[i + j + 1]);
            }
            ev[i + N] = addc(0, 0);
            od[i + 1] = mad_lo_cc(a[1], bi, od[i + 1]);
            od[i + 2] = madc_hi_cc(a[1], bi, od[i + 2]);
#pragma unroll
            for (int j = 3; j < N - 1; j += 2) {
                od[i + j] = madc_lo_cc(a[j], bi, od[i + j]);
                od[i + j + 1] = madc_hi_cc(a[j], bi, od[i + j + 1]);
            }
            od[i + N - 1] = madc_lo_cc(a[N - 1], bi, od[i + N - 1]);
            od[i + N] = madc_hi(a[N - 1], bi, od[i + N]);
        }
    }
    // Positions N-1..2N-1 (a·b < 2^(64N): no carry out of the top limb).
    out[N - 1] = add_cc(acc[0][N - 1], acc[1][N - 1]);
#pragma unroll
    for (int k = N; k < 2 * N - 1; k++) out[k] = addc_cc(acc[0][k], acc[1][k]);
    out[2 * N - 1] = addc(acc[0][2 * N - 1], acc[1][2 * N - 1]);
}

// 2N-limb r = a + b and r = a - b, modulo 2^(64N): sums and differences of mul_wide
// products (the caller keeps the true value in [0, 2^(64N)), so the wrap is exact).
template <class P>
KILN_DEV void add_wide(uint32_t (&r)[2 * P::N], const uint32_t (&a)[2 * P::N], const uint32_t (&b)[2 * P::N]) {
    constexpr int W = 2 * P::N;
    r[0] = add_cc(a[0], b[0]);
#pragma unroll
    for (int k = 1; k < W - 1; k++) r[k] = addc_cc(a[k], b[k]);
    r[W - 1] = addc(a[W - 1], b[W - 1]);
}

template <class P>
KILN_DEV void sub_wide(uint32_t (&r)[2 * P::N], const uint32_t (&a)[2 * P::N], const uint32_t (&b)[2 * P::N]) {
    constexpr int W = 2 * P::N;
    r[0] = sub_cc(a[0], b[0]);
#pragma unroll
    for (int k = 1; k < W - 1; k++) r[k] = subc_cc(a[k], b[k]);
    r[W - 1] = subc(a[W - 1], b[W - 1]);
}

// Montgomery reduction t / R mod m of a 2N-limb t < m·R, fully reduced (< m).
//
// Row i adds q·m·2^(32i) with q = (limb i of the sum)·(-m^-1) mod 2^32, which clears
// position i. Only t's low half enters the rows (in acc[0], positions 0..N-1); its high
// half is added at the end, so that the positions above the rows' reach stay 0 as the
// paired chains need. Limb i of the sum is acc[0][i] + acc[1][i] (lower positions are
// cleared); that addition's carry goes into position i + 1, where the chain of m's odd
// limbs starts.
//
// Bounds: after row i the rows' sum is below 2^(32N) + m·2^(32(i+1)) < 2^(32(i+N+1))
// (m < 2^(32N-1)), as the carry-free chains need. At the end it is (t_lo + Q·m) / R
// < (R + R·m) / R, so at most m, and adding t_hi gives (t + Q·m) / R < t / R + m < 2m:
// no carry out of 32N bits, and one conditional subtraction finishes.
template <class P>
KILN_DEV typename P::T redc(const uint32_t (&t)[2 * P::N]) {
    constexpr int N = P::N;
    static_assert(N % 2 == 0, "redc pairs limbs: N must be even");
    uint32_t acc[2][2 * N] = {};
#pragma unroll
    for (int k = 0; k < N; k++) acc[0][k] = t[k];

#pragma unroll
    for (int i = 0; i < N; i++) {
        uint32_t(&ev)[2 * N] = acc[i & 1];   // pairs of m's even limbs start at i + even
        uint32_t(&od)[2 * N] = acc[~i & 1];  // and those of its odd limbs at i + odd
        uint32_t s, q;
        if (i == 0) {
            // acc[1] is still 0: the odd-limb products need no additions.
            s = ev[0];
            q = mul_lo(s, P::m0());
#pragma unroll
            for (int j = 1; j < N; j += 2) {
                od[j] = mul_lo(q, P::mod(j));
                od[j + 1] = mul_hi(q, P::mod(j));
            }
        } else {
            s = add_cc(ev[i], od[i]);
            q = mul_lo(s, P::m0());
#pragma unroll
            for (int j = 1; j < N - 1; j += 2) {
                od[i + j] = madc_lo_cc(q, P::mod(j), od[i + j]);
                od[i + j + 1] = madc_hi_cc(q, P::mod(j), od[i + j + 1]);
            }
            od[i + N - 1] = madc_lo_cc(q, P::mod(N - 1), od[i + N - 1]);
            od[i + N] = madc_hi(q, P::mod(N - 1), od[i + N]);
        }
        // Position i becomes 0; its carry runs up the chain.
        ev[i] = mad_lo_cc(q, P::mod(0), s);
        ev[i + 1] = madc_hi_cc(q, P::mod(0), ev[i + 1]);
#pragma unroll
        for (int j = 2; j < N; j += 2) {
            ev[i + j] = madc_lo_cc(q, P::mod(j), ev[i + j]);
            ev[i + j + 1] = madc_hi_cc(q, P::mod(j), ev[i + j + 1]);
        }
        ev[i + N] = addc(0, 0);
    }
    // r = acc[0] + acc[1] + t_hi at positions N..2N-1 (< 2m < 2^(32N): no carry out).
    typename P::T r;
    r.limb[0] = add_cc(acc[0][N], acc[1][N]);
#pragma unroll
    for (int k = 1; k < N - 1; k++) r.limb[k] = addc_cc(acc[0][N + k], acc[1][N + k]);
    r.limb[N - 1] = addc(acc[0][2 * N - 1], acc[1][2 * N - 1]);
    r.limb[0] = add_cc(r.limb[0], t[N]);
#pragma unroll
    for (int k = 1; k < N - 1; k++) r.limb[k] = addc_cc(r.limb[k], t[N + k]);
    r.limb[N - 1] = addc(r.limb[N - 1], t[2 * N - 1]);
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
