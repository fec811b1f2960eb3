// LoRA path helpers; the products themselves go through cuBLASLt.
// lora_dropout: out = keep(seed, i) ? x / (1 - p) : 0 with the same integer hash as the Go
// reference (cuda.DropoutKeep), so that the CPU and GPU drop the same elements.
// lora_dropout_add: dx += keep(seed, i) ? t / (1 - p) : 0, the dropout's backward fused with
// the add into the input gradient (one pass instead of a masked copy and an add).
// Both move 8 elements per step in 128-bit loads (buffers 16-byte aligned), the tail one by one.
#include "common.cuh"
#include "mma.cuh"

__device__ __forceinline__ bool dropout_keep(unsigned int seed, unsigned long long i, float p) {
    unsigned int h = (unsigned int)i * 0x9E3779B9u ^ (unsigned int)(i >> 32) * 0x85EBCA6Bu ^ seed;
    h ^= h >> 16;
    h *= 0x85EBCA6Bu;
    h ^= h >> 13;
    h *= 0xC2B2AE35u;
    h ^= h >> 16;
    return (float)(h >> 8) * (1.0f / 16777216.0f) >= p;
}

// dropped returns element i of x after the mask, plus add (0 for plain dropout).
__device__ __forceinline__ bf16 dropped(float x, float add, unsigned int seed, long long i, float p, float s) {
    return tobf(add + (dropout_keep(seed, (unsigned long long)i, p) ? x * s : 0.f));
}

extern "C" __global__ void lora_dropout(bf16* out, const bf16* x, long long n, long long seed, float p) {
    float s = 1.f / (1.f - p);
    long long tid = blockIdx.x * (long long)blockDim.x + threadIdx.x, step = (long long)gridDim.x * blockDim.x;
    long long n8 = n >> 3;
    for (long long v = tid; v < n8; v += step) {
        bf16 a[8], o[8];
        load8(a, x + 8 * v);
#pragma unroll
        for (int e = 0; e < 8; e++) o[e] = dropped(__bfloat162float(a[e]), 0.f, (unsigned int)seed, 8 * v + e, p, s);
        store8(out + 8 * v, o);
    }
    for (long long i = 8 * n8 + tid; i < n; i += step) out[i] = dropped(ld(x, i), 0.f, (unsigned int)seed, i, p, s);
}

extern "C" __global__ void lora_dropout_add(bf16* dx, const bf16* t, long long n, long long seed, float p) {
    float s = 1.f / (1.f - p);
    long long tid = blockIdx.x * (long long)blockDim.x + threadIdx.x, step = (long long)gridDim.x * blockDim.x;
    long long n8 = n >> 3;
    for (long long v = tid; v < n8; v += step) {
        bf16 a[8], d[8];
        load8(a, t + 8 * v);
        load8(d, dx + 8 * v);
#pragma unroll
        for (int e = 0; e < 8; e++)
            d[e] = dropped(__bfloat162float(a[e]), __bfloat162float(d[e]), (unsigned int)seed, 8 * v + e, p, s);
        store8(dx + 8 * v, d);
    }
    for (long long i = 8 * n8 + tid; i < n; i += step) dx[i] = dropped(ld(t, i), ld(dx, i), (unsigned int)seed, i, p, s);
}
