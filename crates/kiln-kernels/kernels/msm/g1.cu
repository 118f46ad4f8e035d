// G1 MSM kernels (module "msm_g1"): bucket accumulation and reduction over Fp.
#include "msm/curve_kernels.cuh"

MSM_CURVE_KERNELS(g1, FpOps, 3)
