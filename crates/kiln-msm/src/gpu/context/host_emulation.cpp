// The real G1 bucket kernels of kernels/msm/g1.cu on the host, for host_emulation.rs: compiled
// by the system C++ compiler with kernels/host/cuda_emulation.h (CUDA's keywords, blocks of
// threads as fibers) into a shared library the tests load. One extern "C" entry point per
// kernel launches it over host memory with the grid and block the caller gives (those
// MsmContext::reduce launches with).
//
// Every entry point returns 0, or nonzero when the launch could not run as asked (a block
// larger than the kernel's bound, threads of a block that did not reach the same barriers).
#include <cstdint>
#include <cstring>
#include <functional>

#include "host/cuda_emulation.h"
#include "msm/g1.cu"

using Affine = affine_t<FpOps>;
using Xyzz = xyzz_t<FpOps>;

extern "C" int kiln_msm_emu_accumulate_g1(uint32_t grid_x, uint32_t grid_y, uint32_t block, const Affine* bases,
                                          const uint32_t* sorted, const uint32_t* offsets, uint32_t n, uint32_t nb,
                                          uint32_t windows, uint32_t S, uint32_t chunks, Xyzz* buckets, Xyzz* head,
                                          Xyzz* tail, uint32_t* head_b, uint32_t* tail_b) {
    if (block > MSM_ACC_BLOCK) return 1;
    return kiln_emu::launch_2d(grid_x, grid_y, block, [&] {
               msm_accumulate_g1(bases, sorted, offsets, n, nb, windows, S, chunks, buckets, head, tail, head_b,
                                 tail_b);
           }) ? 0 : 2;
}

extern "C" int kiln_msm_emu_join_heads_g1(uint32_t grid_x, uint32_t grid_y, uint32_t block, const uint32_t* offsets,
                                          uint32_t nb, uint32_t windows, uint32_t S, uint32_t chunks, uint32_t level,
                                          Xyzz* head, const uint32_t* head_b) {
    return kiln_emu::launch_2d(grid_x, grid_y, block, [&] {
               msm_join_heads_g1(offsets, nb, windows, S, chunks, level, head, head_b);
           }) ? 0 : 2;
}

extern "C" int kiln_msm_emu_bucket_fixup_g1(uint32_t grid_x, uint32_t grid_y, uint32_t block, const uint32_t* offsets,
                                            uint32_t nb, uint32_t windows, uint32_t S, uint32_t chunks, Xyzz* buckets,
                                            const Xyzz* head, const Xyzz* tail) {
    return kiln_emu::launch_2d(grid_x, grid_y, block, [&] {
               msm_bucket_fixup_g1(offsets, nb, windows, S, chunks, buckets, head, tail);
           }) ? 0 : 2;
}

// The counting sort's histogram and scatter (msm.cuh; sort.cu's kernels call the same).
extern "C" int kiln_msm_emu_histogram(uint32_t grid_x, uint32_t block, const fr_t* scalars, uint32_t n, uint32_t c,
                                      uint32_t windows, uint32_t* counts) {
    return kiln_emu::launch_2d(grid_x, 1, block, [&] { histogram(scalars, n, c, windows, counts); }) ? 0 : 2;
}

extern "C" int kiln_msm_emu_scatter_by_window(uint32_t grid_x, uint32_t grid_y, uint32_t block, const fr_t* scalars,
                                              const uint32_t* map, uint32_t n, uint32_t c, uint32_t windows,
                                              uint32_t* cursor, uint32_t* sorted) {
    return kiln_emu::launch_2d(grid_x, grid_y, block, [&] {
               scatter_by_window(scalars, map, n, c, windows, cursor, sorted);
           }) ? 0 : 2;
}

// out[i] = points[i] in Jacobian coordinates (kiln-field's layout, which Rust reads back).
extern "C" void kiln_msm_emu_xyzz_to_jacobian_g1(const Xyzz* points, uint32_t count, jacobian_t<FpOps>* out) {
    for (uint32_t i = 0; i < count; i++) out[i] = kiln_curve::xyzz_to_jacobian(points[i]);
}

extern "C" int kiln_msm_emu_sum_indexed_g1(uint32_t grid_x, uint32_t block, const Affine* bases, const uint32_t* idx,
                                           const uint32_t* count, uint32_t P, Xyzz* partial) {
    return kiln_emu::launch_2d(grid_x, 1, block, [&] { msm_sum_indexed_g1(bases, idx, count, P, partial); }) ? 0 : 2;
}

extern "C" int kiln_msm_emu_fold_g1(uint32_t grid_x, uint32_t block, Xyzz* buf, uint32_t len, uint32_t fan) {
    return kiln_emu::launch_2d(grid_x, 1, block, [&] { msm_fold_g1(buf, len, fan); }) ? 0 : 2;
}

extern "C" int kiln_msm_emu_sum_groups_g1(uint32_t grid_x, uint32_t grid_y, uint32_t block, const Xyzz* in, Xyzz* out,
                                          uint32_t len, uint32_t groups, uint32_t fan) {
    return kiln_emu::launch_2d(grid_x, grid_y, block, [&] { msm_sum_groups_g1(in, out, len, groups, fan); }) ? 0 : 2;
}
