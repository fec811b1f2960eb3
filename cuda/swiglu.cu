// SwiGLU: h = silu(gate) * up, and its backward. Elementwise, grid-stride.
#include "common.cuh"

extern "C" __global__ void swiglu_fwd(bf16* h, const bf16* gate, const bf16* up, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        float g = ld(gate, i);
        h[i] = tobf(g / (1.f + expf(-g)) * ld(up, i));
    }
}

extern "C" __global__ void swiglu_bwd(bf16* dgate, bf16* dup, const bf16* dh, const bf16* gate,
                                      const bf16* up, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        float g = ld(gate, i), u = ld(up, i), d = ld(dh, i);
        float sg = 1.f / (1.f + expf(-g));
        dgate[i] = tobf(d * u * sg * (1.f + g * (1.f - sg)));
        dup[i] = tobf(d * g * sg);
    }
}
