// The smallest kernel that goes through the whole chain (nvcc -> fatbin -> embedded ->
// loaded by kiln-cuda -> launched from Rust): out[i] = a[i] * b[i] + c[i] mod 2^64.
#include <cstdint>

extern "C" __global__ void smoke_mul_add_u64(const uint64_t* a, const uint64_t* b, const uint64_t* c,
                                             uint64_t* out, uint32_t n) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] * b[i] + c[i];
}
