// Linear-layer bias (Qwen2's q/k/v projections). The bias is broadcast into the output
// rows and the product then accumulates onto them (cuBLASLt beta = 1), so that
// y = bf16(x·Wᵀ + b) is rounded once, as PyTorch's addmm does.
#include "common.cuh"

// bias_fill_bf16: out[r, c] = bias[c] for rows × cols; blocks stride over rows, threads
// over columns (no division per element).
extern "C" __global__ void bias_fill_bf16(bf16* out, const bf16* bias, long long rows, long long cols) {
    for (long long r = blockIdx.x; r < rows; r += gridDim.x)
        for (int c = threadIdx.x; c < cols; c += blockDim.x) out[r * cols + c] = bias[c];
}
