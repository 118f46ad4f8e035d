// kiln-kernels: testing
// A kernel that keeps one stream busy for a given wall-clock time, so the lock tests can
// queue a stream-ordered free behind "a long kernel" (ARCHITECTURE.md §1) on purpose.
#include <cstdint>

__device__ __forceinline__ uint64_t lock_globaltimer_ns() {
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// One thread spins until `ns` nanoseconds have passed on the GPU's global timer, then
// writes the time it actually spun to out[0] (so the host can check the kernel ran).
extern "C" __global__ void lock_spin_ns(uint64_t ns, uint64_t* out) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    const uint64_t start = lock_globaltimer_ns();
    uint64_t now = start;
    while (now - start < ns) {
        __nanosleep(1000);
        now = lock_globaltimer_ns();
    }
    out[0] = now - start;
}
