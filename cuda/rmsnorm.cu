// RMSNorm with a fused residual add. One block per row.
// fwd: h = x + resid (stored in bf16 when resid is given), rstd = 1/sqrt(mean(h^2)+eps),
//      y = bf16(h*rstd) * w.
// bwd: dh = rstd*(g - xhat*mean(g*xhat)) + dresid, g = dy*w, weight frozen.
#include "common.cuh"

extern "C" __global__ void rmsnorm_fwd(bf16* y, bf16* h_out, float* rstd, const bf16* x,
                                       const bf16* resid, const bf16* w, long long rows,
                                       long long D, float eps) {
    long long r = blockIdx.x;
    if (r >= rows) return;
    const bf16* xr = x + r * D;
    float ss = 0.f;
    for (long long i = threadIdx.x; i < D; i += blockDim.x) {
        float v = ld(xr, i);
        if (resid) {
            v = rbf(v + ld(resid, r * D + i));
            h_out[r * D + i] = tobf(v);
        }
        ss += v * v;
    }
    ss = block_sum(ss);
    float rs = rsqrtf(ss / (float)D + eps);
    if (threadIdx.x == 0) rstd[r] = rs;
    for (long long i = threadIdx.x; i < D; i += blockDim.x) {
        float v = ld(xr, i);
        if (resid) v = rbf(v + ld(resid, r * D + i));
        y[r * D + i] = tobf(rbf(v * rs) * ld(w, i));
    }
}

extern "C" __global__ void rmsnorm_bwd(bf16* dh, const bf16* dy, const bf16* h, const float* rstd,
                                       const bf16* w, const bf16* dresid, long long rows, long long D) {
    long long r = blockIdx.x;
    if (r >= rows) return;
    float rs = rstd[r];
    float dot = 0.f;
    for (long long i = threadIdx.x; i < D; i += blockDim.x)
        dot += ld(dy, r * D + i) * ld(w, i) * ld(h, r * D + i) * rs;
    float mean = block_sum(dot) / (float)D;
    for (long long i = threadIdx.x; i < D; i += blockDim.x) {
        float g = ld(dy, r * D + i) * ld(w, i);
        float v = rs * (g - ld(h, r * D + i) * rs * mean);
        if (dresid) v += ld(dresid, r * D + i);
        dh[r * D + i] = tobf(v);
    }
}
