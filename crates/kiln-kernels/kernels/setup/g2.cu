// G2 fixed-base kernels of the setup (module "setup_g2"); see fixed_base.cuh. The Fp2
// products are calls, as in msm/g2.cu (compile time and register pressure).
#define KILN_FP2_NOINLINE
#include "setup/fixed_base.cuh"

SETUP_CURVE_KERNELS(g2, Fp2Ops)
