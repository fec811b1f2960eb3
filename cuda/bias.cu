// Linear-layer bias (Qwen2's q/k/v projections). The bias is broadcast into the output
// rows and the product then accumulates onto them (cuBLASLt beta = 1), so that
// y = bf16(x·Wᵀ + b) is rounded once, as PyTorch's addmm does.
#include "common.cuh"

// bias_fill_bf16: out[r, c] = bias[c] for rows × cols, grid-stride.
extern "C" __global__ void bias_fill_bf16(bf16* out, const bf16* bias, long long rows, long long cols) {
    long long n = rows * cols;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        out[i] = bias[i % cols];
}
