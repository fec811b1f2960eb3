// The hybrid's full-attention q/k: RMSNorm over head_dim (weights given as 1 + w) and
// rotate_half RoPE on the first rot dims only (partial_rotary_factor), the rest passed
// through normalized. The input rows may be strided (q read from the query half of each head's
// 2·hd q_proj columns); the output is contiguous [nvec, hd]. One block per (token, head)
// vector, one thread per element (hd rounded up to a warp multiple).
#include "common.cuh"

__device__ __forceinline__ void prope_angle(const int* pos, long long t, long long j, long long rot,
                                            float theta, float* c, float* s) {
    float inv = (float)(1.0 / pow((double)theta, (double)(2 * j) / (double)rot));
    sincosf((float)pos[t] * inv, s, c);
}

extern "C" __global__ void qk_norm_prope_fwd(bf16* out, float* rstd, const bf16* x, const bf16* w, const int* pos,
                                             long long nvec, long long H, long long hd, long long rot,
                                             long long xstride, float eps, float theta) {
    long long v = blockIdx.x;
    if (v >= nvec) return;
    long long i = threadIdx.x, base = v * xstride, half = rot / 2;
    bool act = i < hd;
    float xi = act ? ld(x, base + i) : 0.f;
    float rs = rsqrtf(block_sum(xi * xi) / (float)hd + eps);
    if (i == 0) rstd[v] = rs;
    if (!act) return;
    float ni = rbf(xi * rs) * ld(w, i);
    if (i >= rot) {
        out[v * hd + i] = tobf(ni);
        return;
    }
    long long p = i < half ? i + half : i - half;
    float np = rbf(ld(x, base + p) * rs) * ld(w, p), c, s;
    prope_angle(pos, v / H, i % half, rot, theta, &c, &s);
    out[v * hd + i] = tobf(i < half ? ni * c - np * s : ni * c + np * s);
}

// qk_norm_prope_bwd: dx in x's strided layout (the other columns untouched).
extern "C" __global__ void qk_norm_prope_bwd(bf16* dx, const bf16* dout, const bf16* x, const float* rstd,
                                             const bf16* w, const int* pos, long long nvec, long long H,
                                             long long hd, long long rot, long long xstride, float theta) {
    long long v = blockIdx.x;
    if (v >= nvec) return;
    long long i = threadIdx.x, base = v * xstride, half = rot / 2;
    bool act = i < hd;
    float g = 0.f, xi = 0.f, rs = rstd[v];
    if (act) {
        g = ld(dout, v * hd + i);
        if (i < rot) {
            float c, s;
            prope_angle(pos, v / H, i % half, rot, theta, &c, &s);
            long long p = i < half ? i + half : i - half;
            float dp = ld(dout, v * hd + p);
            g = i < half ? g * c + dp * s : g * c - dp * s;
        }
        g *= ld(w, i);
        xi = ld(x, base + i);
    }
    float mean = block_sum(g * xi * rs) / (float)hd;
    if (act) dx[base + i] = tobf(rs * (g - xi * rs * mean));
}
