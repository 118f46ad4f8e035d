// G1 fixed-base kernels of the setup (module "setup_g1"); see fixed_base.cuh.
#include "setup/fixed_base.cuh"

SETUP_CURVE_KERNELS(g1, FpOps)
