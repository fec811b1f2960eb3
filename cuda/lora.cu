// LoRA path helpers; the products themselves go through cuBLASLt.
// lora_dropout: out = keep(seed, i) ? x / (1 - p) : 0 with the same integer hash as the Go
// reference (cuda.DropoutKeep), so that the CPU and GPU drop the same elements.
#include "common.cuh"

__device__ __forceinline__ bool dropout_keep(unsigned int seed, unsigned long long i, float p) {
    unsigned int h = (unsigned int)i * 0x9E3779B9u ^ (unsigned int)(i >> 32) * 0x85EBCA6Bu ^ seed;
    h ^= h >> 16;
    h *= 0x85EBCA6Bu;
    h ^= h >> 13;
    h *= 0xC2B2AE35u;
    h ^= h >> 16;
    return (float)(h >> 8) * (1.0f / 16777216.0f) >= p;
}

extern "C" __global__ void lora_dropout(bf16* out, const bf16* x, long long n, long long seed, float p) {
    float s = 1.f / (1.f - p);
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        out[i] = dropout_keep((unsigned int)seed, (unsigned long long)i, p) ? tobf(ld(x, i) * s) : tobf(0.f);
}
