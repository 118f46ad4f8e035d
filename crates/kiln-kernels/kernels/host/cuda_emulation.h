// CUDA on the host: what a kernel file needs to compile with a plain C++ compiler and run
// over host memory, so a test can check the real kernel source against a CPU reference
// without a GPU (crates/kiln-ntt/src/host_emulation.rs runs kernels/ntt/ntt.cu this way).
//
// Include it (after the standard headers the driver needs) before the kernel file. It
// supplies the CUDA keywords, the built-ins the kernels use (uint4, make_uint4, __brev, __clz, min)
// and the thread model: `launch` runs a 1-D grid (`launch_2d` a 2-D one, for kernels that take a
// second index from blockIdx.y), each block's threads as cooperative fibers
// (ucontext) on one host thread, so `__syncthreads` is a real barrier and `__shared__`
// memory is one array per block, as on the GPU. Blocks are spread over the host's cores.
//
// The field arithmetic needs nothing from here: field/ptx.cuh emulates its PTX carry chain
// itself outside nvcc (also used by crates/kiln-field/tests/host_emulation.rs).
//
// Scheduling: a block's threads run one after the other, each until its next barrier, the
// order least like the GPU's lock step: a missing barrier makes a thread read shared memory
// its neighbours have not written yet, which a test then sees as a wrong result. All threads
// of a block must reach the same barriers (a thread that exits while others wait is an error).
//
// Shared memory: `__shared__` becomes `thread_local` (a block-scope thread_local is static:
// one array per host thread, hence per running block); `extern __shared__ T name[]` (dynamic
// shared memory) needs a namespace-scope `thread_local` definition of `name` in the driver.
// Every copy of a uint4 at an address inside the range set by `shared_range` is logged per
// thread, so a driver can check the bank pattern of 16-byte shared accesses (`bank_conflicts`).
#pragma once

#ifdef __CUDACC__
#error "host/cuda_emulation.h is for host compilers only"
#endif

#include <ucontext.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

namespace kiln_emu {

struct dim3 {
    uint32_t x = 1, y = 1, z = 1;
};

// One GPU thread: a fiber with its own stack, and its log of shared-memory addresses.
struct Thread {
    dim3 idx;
    ucontext_t ctx;
    bool done = false;
    std::vector<uint32_t> shared_log;  // byte offsets into the shared range, in program order
};

// What the running fiber sees: set by the scheduler of the host thread it runs on.
struct Current {
    Thread* thread = nullptr;
    dim3 block_idx, block_dim, grid_dim;
    ucontext_t scheduler;
    const char* shared_lo = nullptr;  // the logged range (empty: nothing logged)
    const char* shared_hi = nullptr;
    const std::function<void()>* body = nullptr;
};
inline thread_local Current current;

// Logs a 16-byte shared-memory access of the running thread (called by uint4's copies).
inline void touch(const void* p) {
    const char* c = static_cast<const char*>(p);
    if (c >= current.shared_lo && c < current.shared_hi && current.thread)
        current.thread->shared_log.push_back(static_cast<uint32_t>(c - current.shared_lo));
}

// Logs the accesses to [p, p + bytes) from now on in this host thread (a driver calls it in
// its per-block hook, for its own host thread's copy of a shared array).
inline void shared_range(const void* p, size_t bytes) {
    current.shared_lo = static_cast<const char*>(p);
    current.shared_hi = current.shared_lo + bytes;
}

inline void syncthreads() { swapcontext(&current.thread->ctx, &current.scheduler); }

inline void fiber_entry() {
    (*current.body)();
    current.thread->done = true;
    swapcontext(&current.thread->ctx, &current.scheduler);
}

// Per-block hooks of a launch: `before` runs on the block's host thread before its threads
// start (set up or poison shared memory there), `after` gets its threads once all are done.
struct Hooks {
    std::function<void()> before;
    std::function<void(const std::vector<Thread>&)> after;
};

// Runs kernel body `body` (a call of the kernel with its arguments) on a 2-D grid of
// `grid_x` × `grid_y` blocks of `block` threads. Returns false (after finishing the grid) if the
// threads of a block did not reach the same barriers.
inline bool launch_2d(uint32_t grid_x, uint32_t grid_y, uint32_t block, const std::function<void()>& body,
                      const Hooks& hooks = {}) {
    // Kernel frames are small (a thread holds a few field elements); 64 KiB leaves room.
    constexpr size_t STACK = 64 << 10;
    const uint32_t grid = grid_x * grid_y;
    std::atomic<uint32_t> next{0};
    std::atomic<bool> ok{true};
    auto worker = [&] {
        std::vector<Thread> threads(block);
        std::unique_ptr<char[]> stacks(new char[STACK * block]);
        current.body = &body;
        current.grid_dim = dim3{grid_x, grid_y, 1};
        current.block_dim = dim3{block, 1, 1};
        for (uint32_t b; (b = next.fetch_add(1)) < grid;) {
            current.block_idx = dim3{b % grid_x, b / grid_x, 0};
            if (hooks.before) hooks.before();
            for (uint32_t t = 0; t < block; t++) {
                Thread& th = threads[t];
                th.idx = dim3{t, 0, 0};
                th.done = false;
                th.shared_log.clear();
                getcontext(&th.ctx);
                th.ctx.uc_stack.ss_sp = stacks.get() + t * STACK;
                th.ctx.uc_stack.ss_size = STACK;
                th.ctx.uc_link = nullptr;
                makecontext(&th.ctx, fiber_entry, 0);
            }
            // Phases between barriers: every live thread runs until its next barrier or its end.
            for (uint32_t live = block; live > 0;) {
                uint32_t waiting = 0, ended = 0;
                for (Thread& th : threads) {
                    if (th.done) continue;
                    current.thread = &th;
                    swapcontext(&current.scheduler, &th.ctx);
                    (th.done ? ended : waiting)++;
                }
                current.thread = nullptr;
                if (waiting > 0 && ended > 0) ok = false;  // some threads skipped a barrier
                live -= ended;
            }
            if (hooks.after) hooks.after(threads);
        }
        current.shared_lo = current.shared_hi = nullptr;
    };
    const uint32_t cores = std::max(1u, std::thread::hardware_concurrency());
    const uint32_t n = std::min(cores, grid);
    std::vector<std::thread> pool;
    for (uint32_t i = 1; i < n; i++) pool.emplace_back(worker);
    if (n > 0) worker();
    for (auto& t : pool) t.join();
    return ok;
}

// A 1-D grid of `grid` blocks.
inline bool launch(uint32_t grid, uint32_t block, const std::function<void()>& body, const Hooks& hooks = {}) {
    return launch_2d(grid, 1, block, body, hooks);
}

// Bank conflicts of a block's logged 16-byte accesses: a warp's LDS.128/STS.128 is served a
// quarter warp (8 threads) at a time, one wavefront per thread hitting the same 16-byte bank
// group (of 8) most often; every wavefront beyond the first of a quarter is a conflict. The
// i-th access of each thread of a warp is taken as one instruction (the kernels' shared
// accesses are not divergent); a warp whose threads logged different counts is reported as
// UINT64_MAX.
inline uint64_t bank_conflicts(const std::vector<Thread>& threads) {
    uint64_t conflicts = 0;
    for (size_t w = 0; w < threads.size(); w += 32) {
        const size_t end = std::min(threads.size(), w + 32);
        const size_t count = threads[w].shared_log.size();
        for (size_t t = w; t < end; t++)
            if (threads[t].shared_log.size() != count) return UINT64_MAX;
        for (size_t i = 0; i < count; i++) {
            for (size_t q = w; q < end; q += 8) {
                uint32_t hits[8] = {};
                for (size_t t = q; t < std::min(end, q + 8); t++) hits[(threads[t].shared_log[i] >> 4) & 7]++;
                conflicts += *std::max_element(hits, hits + 8) - 1;
            }
        }
    }
    return conflicts;
}

}  // namespace kiln_emu

// The CUDA keywords. __noinline__ is defined last of all: libstdc++ spells
// __attribute__((__noinline__)), so the standard headers must come before this file.
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __shared__ thread_local

#define threadIdx (::kiln_emu::current.thread->idx)
#define blockIdx (::kiln_emu::current.block_idx)
#define blockDim (::kiln_emu::current.block_dim)
#define gridDim (::kiln_emu::current.grid_dim)
#define __syncthreads() ::kiln_emu::syncthreads()

// CUDA's uint4, whose copies log shared-memory addresses (kiln_emu::touch).
struct alignas(16) uint4 {
    uint32_t x, y, z, w;
    uint4() = default;
    uint4(const uint4& o) : x(o.x), y(o.y), z(o.z), w(o.w) { kiln_emu::touch(&o); }
    uint4& operator=(const uint4& o) {
        kiln_emu::touch(&o);
        kiln_emu::touch(this);
        x = o.x, y = o.y, z = o.z, w = o.w;
        return *this;
    }
};
inline uint4 make_uint4(uint32_t x, uint32_t y, uint32_t z, uint32_t w) {
    uint4 r;
    r.x = x, r.y = y, r.z = z, r.w = w;
    return r;
}

inline uint32_t __brev(uint32_t v) {
    v = ((v >> 1) & 0x55555555u) | ((v & 0x55555555u) << 1);
    v = ((v >> 2) & 0x33333333u) | ((v & 0x33333333u) << 2);
    v = ((v >> 4) & 0x0f0f0f0fu) | ((v & 0x0f0f0f0fu) << 4);
    v = ((v >> 8) & 0x00ff00ffu) | ((v & 0x00ff00ffu) << 8);
    return (v >> 16) | (v << 16);
}
inline int __clz(uint32_t v) { return v == 0 ? 32 : __builtin_clz(v); }
// Blocks run on several host threads at once, so a real atomic (relaxed, as CUDA's).
inline uint32_t atomicAdd(uint32_t* addr, uint32_t v) { return __atomic_fetch_add(addr, v, __ATOMIC_RELAXED); }
inline uint32_t min(uint32_t a, uint32_t b) { return a < b ? a : b; }
