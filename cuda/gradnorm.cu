// Global gradient norm: each launch adds sum(x^2) of one fp32 tensor into *acc (fp32 atomics,
// one per block), so several LoRA tensors accumulate into one total.
#include "common.cuh"

extern "C" __global__ void sumsq(float* acc, const float* x, long long n) {
    float s = 0.f;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        s += x[i] * x[i];
    s = block_sum(s);
    if (threadIdx.x == 0) atomicAdd(acc, s);
}
