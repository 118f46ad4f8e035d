// G2 MSM kernels (module "msm_g2"): bucket accumulation and reduction over Fp2.
//
// The Fp2 products are calls and the mixed addition is inlined in the accumulate loop. The
// other way round (the addition a call, its ~30 Fp products inlined in it) spilled its
// operands to local memory on every addition and ran slower (docs/PERF.md, G2 MSM); this way
// it also compiles in seconds instead of minutes.
#define KILN_FP2_NOINLINE
#include "msm/curve_kernels.cuh"

MSM_CURVE_KERNELS(g2, Fp2Ops, 1)
