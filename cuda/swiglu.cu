// SwiGLU: h = silu(gate) * up, and its backward. Elementwise, grid-stride, 8 elements per
// step in 128-bit loads and stores (buffers 16-byte aligned), the n % 8 tail one by one.
#include "common.cuh"
#include "mma.cuh"

__device__ __forceinline__ float silu_mul(float g, float u) { return g / (1.f + expf(-g)) * u; }

extern "C" __global__ void swiglu_fwd(bf16* h, const bf16* gate, const bf16* up, long long n) {
    long long tid = blockIdx.x * (long long)blockDim.x + threadIdx.x, step = (long long)gridDim.x * blockDim.x;
    long long n8 = n >> 3;
    for (long long v = tid; v < n8; v += step) {
        bf16 g[8], u[8], o[8];
        load8(g, gate + 8 * v);
        load8(u, up + 8 * v);
#pragma unroll
        for (int e = 0; e < 8; e++) o[e] = tobf(silu_mul(__bfloat162float(g[e]), __bfloat162float(u[e])));
        store8(h + 8 * v, o);
    }
    for (long long i = 8 * n8 + tid; i < n; i += step) h[i] = tobf(silu_mul(ld(gate, i), ld(up, i)));
}

__device__ __forceinline__ void swiglu_grad(float d, float g, float u, bf16* dg, bf16* du) {
    float sg = 1.f / (1.f + expf(-g));
    *dg = tobf(d * u * sg * (1.f + g * (1.f - sg)));
    *du = tobf(d * g * sg);
}

extern "C" __global__ void swiglu_bwd(bf16* dgate, bf16* dup, const bf16* dh, const bf16* gate,
                                      const bf16* up, long long n) {
    long long tid = blockIdx.x * (long long)blockDim.x + threadIdx.x, step = (long long)gridDim.x * blockDim.x;
    long long n8 = n >> 3;
    for (long long v = tid; v < n8; v += step) {
        bf16 g[8], u[8], d[8], dg[8], du[8];
        load8(g, gate + 8 * v);
        load8(u, up + 8 * v);
        load8(d, dh + 8 * v);
#pragma unroll
        for (int e = 0; e < 8; e++)
            swiglu_grad(__bfloat162float(d[e]), __bfloat162float(g[e]), __bfloat162float(u[e]), &dg[e], &du[e]);
        store8(dgate + 8 * v, dg);
        store8(dup + 8 * v, du);
    }
    for (long long i = 8 * n8 + tid; i < n; i += step) swiglu_grad(ld(dh, i), ld(gate, i), ld(up, i), &dgate[i], &dup[i]);
}
