// The real kernels of kernels/ntt/ntt.cu on the host, for src/host_emulation.rs: compiled by
// the system C++ compiler with kernels/host/cuda_emulation.h (CUDA's keywords, blocks of
// threads as fibers with real barriers and per-block shared memory) into a shared library the
// tests load. One extern "C" entry point per kernel launches it over host memory with the
// grid and block the caller gives (those of the launch lists in src/launch.rs).
//
// Every entry point returns 0, or nonzero when the launch could not run as asked (an unknown
// kernel, more dynamic shared memory than a block has, threads of a block that did not reach
// the same barriers). `conflicts`, when not null, accumulates the shared-memory bank conflicts
// of the pass kernels' 16-byte accesses (kiln_emu::bank_conflicts; UINT64_MAX: divergent).
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>

#include "host/cuda_emulation.h"
#include "ntt/ntt.cu"

// The passes' dynamic shared memory (`extern __shared__ uint4 sh[]` in ntt.cu): one array per
// host thread, as large as a block may ask for.
thread_local uint4 sh[2u << NTT_MAX_LOG_POINTS];

namespace {

using PassKernel = void (*)(fr_t*, const fr_t*, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t,
                            uint32_t, uint32_t, uint32_t, uint32_t);

struct Named {
    const char* name;
    PassKernel kernel;
};
const Named PASS_KERNELS[] = {
    {"ntt_pass_dif8", ntt_pass_dif8},         {"ntt_pass_dit8", ntt_pass_dit8},
    {"ntt_pass_dif4", ntt_pass_dif4},         {"ntt_pass_dit4", ntt_pass_dit4},
    {"ntt_pass_dif8_inv", ntt_pass_dif8_inv}, {"ntt_pass_dit8_inv", ntt_pass_dit8_inv},
    {"ntt_pass_dif4_inv", ntt_pass_dif4_inv}, {"ntt_pass_dit4_inv", ntt_pass_dit4_inv},
};

}  // namespace

extern "C" int kiln_ntt_emu_pass(const char* name, uint32_t grid, uint32_t block, uint32_t shared_bytes, fr_t* a,
                                 const fr_t* tw, const uint32_t* args, uint64_t* conflicts) {
    PassKernel kernel = nullptr;
    for (const Named& k : PASS_KERNELS)
        if (!strcmp(k.name, name)) kernel = k.kernel;
    if (!kernel || shared_bytes > sizeof sh || block > NTT_PASS_THREADS) return 1;
    std::atomic<uint64_t> total{0};
    kiln_emu::Hooks hooks;
    hooks.before = [&] {
        // Poison the block's shared memory: a read before the block wrote it (a missing
        // barrier, a wrong index) then yields garbage, not a neighbour's leftovers.
        memset(static_cast<void*>(sh), 0xa5, shared_bytes);
        kiln_emu::shared_range(sh, shared_bytes);
    };
    hooks.after = [&](const std::vector<kiln_emu::Thread>& threads) {
        const uint64_t c = kiln_emu::bank_conflicts(threads);
        total = (c == UINT64_MAX || total == UINT64_MAX) ? UINT64_MAX : total + c;
    };
    const bool ok = kiln_emu::launch(
        grid, block,
        [&] { kernel(a, tw, args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7], args[8], args[9],
                     args[10]); },
        hooks);
    if (conflicts) *conflicts = (total == UINT64_MAX || *conflicts == UINT64_MAX) ? UINT64_MAX : *conflicts + total;
    return ok ? 0 : 2;
}

extern "C" int kiln_ntt_emu_bitrev(uint32_t grid, uint32_t block, fr_t* a, uint32_t log_n, uint32_t b) {
    if (block > NTT_BITREV_THREADS) return 1;
    return kiln_emu::launch(grid, block, [&] { ntt_bitrev(a, log_n, b); }) ? 0 : 2;
}

extern "C" int kiln_ntt_emu_twiddles(uint32_t grid, uint32_t block, fr_t* tw, uint32_t roots, uint32_t w_lo,
                                     uint32_t w_hi, uint32_t w_lo_bits, uint32_t half_n) {
    return kiln_emu::launch(grid, block, [&] { ntt_twiddles(tw, roots, w_lo, w_hi, w_lo_bits, half_n); }) ? 0 : 2;
}

extern "C" int kiln_ntt_emu_pointwise(uint32_t grid, uint32_t block, fr_t* a, const fr_t* b, const fr_t* c,
                                      const fr_t* tw, uint32_t z_inv, uint32_t n) {
    return kiln_emu::launch(grid, block, [&] { ntt_pointwise(a, b, c, tw, z_inv, n); }) ? 0 : 2;
}

extern "C" int kiln_ntt_emu_mul(uint32_t grid, uint32_t block, fr_t* x, const fr_t* y, uint32_t n) {
    return kiln_emu::launch(grid, block, [&] { ntt_mul(x, y, n); }) ? 0 : 2;
}
