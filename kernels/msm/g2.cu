// G2 MSM kernels (module "msm_g2"): bucket accumulation and reduction over Fp2.
#include "msm/curve_kernels.cuh"

MSM_CURVE_KERNELS(g2, Fp2Ops, false, 1)
