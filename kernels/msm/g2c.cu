// Experiment, loaded only by the msm bench (MsmContext::with_kernel_variant): the G2 MSM
// kernels with the Fp2 products as calls and the mixed addition inlined in the accumulate
// loop (the structure of bench_g2_add_affine, 1.54 ns per addition), against msm_g2 (the
// mixed addition a call with its Fp2 products inlined: ~2.9 ns per addition in accumulate).
#define KILN_FP2_NOINLINE
#include "msm/curve_kernels.cuh"

MSM_CURVE_KERNELS(g2c, Fp2Ops, true, 1)
