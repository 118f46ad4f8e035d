// CPU driver for tests/host_emulation.rs: the kernel headers compiled by a plain C++ compiler
// (field/ptx.cuh then emulates each PTX carry instruction), so CI checks the arithmetic
// against blstrs without a GPU. Reads lines "<kind> <op> <hex words...>" and prints the
// result words. Kinds: fr, fp, fp2 (field op codes of kernels/field/tests.cu; inputs a, b),
// g1, g2 (curve op codes of kernels/curve/tests.cu; inputs a, b Jacobian, c affine).
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "curve/g1.cuh"
#include "curve/g2.cuh"
#include "field/fr.cuh"

// Words are copied with memcpy: casting the limb structs to uint64_t* would break strict
// aliasing, and the optimiser then reorders the reads.
template <class T>
bool rd(T& x) {
    uint64_t w[sizeof(T) / 8];
    for (size_t i = 0; i < sizeof(T) / 8; i++)
        if (scanf("%" SCNx64, &w[i]) != 1) return false;
    memcpy(&x, w, sizeof(T));
    return true;
}
template <class T>
void wr(const T& x) {
    uint64_t w[sizeof(T) / 8];
    memcpy(w, &x, sizeof(T));
    for (size_t i = 0; i < sizeof(T) / 8; i++) printf("%" PRIx64 " ", w[i]);
    printf("\n");
}
template <class T>
T flag(bool b) {
    T r;
    memset(&r, 0, sizeof r);
    uint32_t one = b ? 1u : 0u;
    memcpy(&r, &one, 4);
    return r;
}
template <class T>
uint32_t low32(const T& x) {
    uint32_t v;
    memcpy(&v, &x, 4);
    return v;
}

#define FIELD_CASES(P, T)                                 \
    switch (op) {                                         \
        case 0: r = P##_add(a, b); break;                 \
        case 1: r = P##_sub(a, b); break;                 \
        case 2: r = P##_neg(a); break;                    \
        case 3: r = P##_dbl(a); break;                    \
        case 4: r = P##_mul(a, b); break;                 \
        case 5: r = P##_sqr(a); break;                    \
        case 6: r = P##_inv(a); break;                    \
        case 7: r = P##_to_mont(a); break;                \
        case 8: r = P##_from_mont(a); break;              \
        case 9: r = P##_pow(a, low32(b)); break; \
        case 10: r = flag<T>(P##_eq(a, b)); break;        \
        case 11: r = flag<T>(P##_is_zero(a)); break;      \
        default: return 1;                                \
    }

template <class F>
bool curve_op(const jacobian_t<F>& a, const jacobian_t<F>& b, const affine_t<F>& c, jacobian_t<F>& out, unsigned op) {
    using namespace kiln_curve;
    switch (op) {
        case 0: { auto acc = jacobian_to_xyzz(a); xyzz_add_affine(acc, c); out = xyzz_to_jacobian(acc); return true; }
        case 1: { auto acc = jacobian_to_xyzz(a); xyzz_add(acc, jacobian_to_xyzz(b)); out = xyzz_to_jacobian(acc); return true; }
        case 2: { auto acc = jacobian_to_xyzz(a); xyzz_dbl(acc); out = xyzz_to_jacobian(acc); return true; }
        case 3: out = xyzz_to_jacobian(xyzz_neg(jacobian_to_xyzz(a))); return true;
        case 4: { auto n = affine_neg(c); out = affine_is_zero(n) ? jacobian_zero<F>() : jacobian_t<F>{n.x, n.y, F::one()}; return true; }
        case 5: out = jacobian_add(a, b); return true;
        case 6: out = jacobian_dbl(a); return true;
        case 7: out = jacobian_neg(a); return true;
        case 8: out = xyzz_to_jacobian(affine_to_xyzz(c)); return true;
        case 9: { auto acc = jacobian_to_xyzz(a); xyzz_add_affine(acc, c); xyzz_add_affine(acc, c); out = xyzz_to_jacobian(acc); return true; }
    }
    return false;
}

int main() {
    char kind[8];
    unsigned op;
    while (scanf("%7s %u", kind, &op) == 2) {
        if (!strcmp(kind, "fr")) {
            fr_t a, b, r;
            rd(a); rd(b);
            FIELD_CASES(fr, fr_t) wr(r);
        } else if (!strcmp(kind, "fp")) {
            fp_t a, b, r;
            rd(a); rd(b);
            FIELD_CASES(fp, fp_t) wr(r);
        } else if (!strcmp(kind, "fp2")) {
            fp2_t a, b, r;
            rd(a); rd(b);
            FIELD_CASES(fp2, fp2_t) wr(r);
        } else if (!strcmp(kind, "g1")) {
            g1_jacobian_t a, b, r; g1_affine_t c;
            rd(a); rd(b); rd(c);
            if (!curve_op(a, b, c, r, op)) return 1;
            wr(r);
        } else if (!strcmp(kind, "g2")) {
            g2_jacobian_t a, b, r; g2_affine_t c;
            rd(a); rd(b); rd(c);
            if (!curve_op(a, b, c, r, op)) return 1;
            wr(r);
        } else {
            return 2;
        }
    }
    return 0;
}
