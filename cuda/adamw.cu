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

// adamw_flat is the fused multi-tensor update of the device optimizer: one launch over
// every LoRA tensor laid out in one flat buffer (padding between tensors is zero in p, m, v
// and g, and stays zero). It clips on the device from *sumsq (the global Σg² of gradnorm.cu,
// gscale = maxnorm / (‖g‖ + 1e-6) when that is below 1 and maxnorm > 0, as PyTorch's
// clip_grad_norm_), updates masters and moments, writes the bf16 copies the products read,
// and zeroes the gradient for the next step's accumulation.
extern "C" __global__ void adamw_flat(float* p, float* m, float* v, float* g, bf16* pbf,
                                      const float* sumsq, long long n, float lr, float beta1,
                                      float beta2, float eps, float wd, float bc1, float bc2,
                                      float maxnorm) {
    float gscale = 1.f;
    if (maxnorm > 0.f) {
        float c = maxnorm / (sqrtf(*sumsq) + 1e-6f);
        if (c < 1.f) gscale = c;
    }
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
        pbf[i] = tobf(pi);
        g[i] = 0.f;
    }
}
