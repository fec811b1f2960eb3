// Casts between fp32 and bf16 (round to nearest even), and a fill for poisoning and init.
#include "common.cuh"

extern "C" __global__ void cast_f32_bf16(bf16* out, const float* in, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        out[i] = tobf(in[i]);
}

extern "C" __global__ void cast_bf16_f32(float* out, const bf16* in, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        out[i] = __bfloat162float(in[i]);
}

extern "C" __global__ void fill_f32(float* out, float v, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        out[i] = v;
}

// add_bf16: a += b, elementwise (gradient accumulation where two paths meet).
extern "C" __global__ void add_bf16(bf16* a, const bf16* b, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        a[i] = tobf(ld(a, i) + ld(b, i));
}

// fill_normal_bf16: out[i] = std * N(0,1) from a counter-based hash (Box-Muller), for random
// benchmark weights made on the device. Same hash as the Go reference cuda.NormalAt.
__device__ __forceinline__ unsigned int mix32(unsigned int h) {
    h ^= h >> 16;
    h *= 0x85EBCA6Bu;
    h ^= h >> 13;
    h *= 0xC2B2AE35u;
    h ^= h >> 16;
    return h;
}

extern "C" __global__ void fill_normal_bf16(bf16* out, long long n, long long seed, float std) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        unsigned int s = (unsigned int)seed;
        unsigned int a = mix32((unsigned int)i * 0x9E3779B9u ^ (unsigned int)(i >> 32) * 0x85EBCA6Bu ^ s);
        unsigned int b = mix32(a ^ 0x68E31DA4u);
        float u1 = ((a >> 8) + 1) * (1.0f / 16777217.0f);
        float u2 = (b >> 8) * (1.0f / 16777216.0f);
        out[i] = tobf(std * sqrtf(-2.f * logf(u1)) * cospif(2.f * u2));
    }
}
