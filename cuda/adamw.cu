// AdamW over fp32 LoRA masters (PyTorch semantics, decoupled weight decay).
// bc1 = 1 - beta1^step, bc2 = 1 - beta2^step are computed on the host; gscale is the
// clipping factor; the gradient is read as fp32.
#include "common.cuh"

extern "C" __global__ void adamw(float* p, float* m, float* v, const float* g, long long n,
                                 float lr, float beta1, float beta2, float eps, float wd,
                                 float bc1, float bc2, float gscale) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        float gi = g[i] * gscale;
        float mi = beta1 * m[i] + (1.f - beta1) * gi;
        float vi = beta2 * v[i] + (1.f - beta2) * gi * gi;
        float pi = p[i] * (1.f - lr * wd);
        pi -= lr * (mi / bc1) / (sqrtf(vi / bc2) + eps);
        p[i] = pi;
        m[i] = mi;
        v[i] = vi;
    }
}
