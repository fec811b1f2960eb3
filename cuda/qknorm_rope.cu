// Rotary embeddings of q and k. qk_norm_rope_*: Qwen3's q/k RMSNorm over head_dim fused
// with rotate_half RoPE; one block per (token, head) vector, hd/2 threads rounded up to a
// warp multiple; thread i owns the pair (i, i+hd/2) and threads past hd/2 only join the
// reductions. rope_*: plain rotate_half RoPE (Qwen2, no q/k norm), one thread per pair.
#include "common.cuh"

__device__ __forceinline__ void rope_angle(const int* pos, long long t, int i, long long hd,
                                           float theta, float* c, float* s) {
    float inv = (float)(1.0 / pow((double)theta, (double)(2 * i) / (double)hd));
    float a = (float)pos[t] * inv;
    sincosf(a, s, c);
}

extern "C" __global__ void qk_norm_rope_fwd(bf16* out, float* rstd, const bf16* x, const bf16* w,
                                            const int* pos, long long nvec, long long H,
                                            long long hd, float eps, float theta) {
    long long v = blockIdx.x;
    if (v >= nvec) return;
    int i = threadIdx.x;
    long long half = hd / 2, base = v * hd;
    bool act = i < half;
    float x1 = act ? ld(x, base + i) : 0.f, x2 = act ? ld(x, base + i + half) : 0.f;
    float ss = block_sum(x1 * x1 + x2 * x2);
    float rs = rsqrtf(ss / (float)hd + eps);
    if (i == 0) rstd[v] = rs;
    if (!act) return;
    float n1 = rbf(x1 * rs) * ld(w, i), n2 = rbf(x2 * rs) * ld(w, i + half);
    float c, s;
    rope_angle(pos, v / H, i, hd, theta, &c, &s);
    out[base + i] = tobf(n1 * c - n2 * s);
    out[base + i + half] = tobf(n2 * c + n1 * s);
}

extern "C" __global__ void qk_norm_rope_bwd(bf16* dx, const bf16* dout, const bf16* x,
                                            const float* rstd, const bf16* w, const int* pos,
                                            long long nvec, long long H, long long hd, float theta) {
    long long v = blockIdx.x;
    if (v >= nvec) return;
    int i = threadIdx.x;
    long long half = hd / 2, base = v * hd;
    bool act = i < half;
    float g1 = 0.f, g2 = 0.f, x1 = 0.f, x2 = 0.f;
    float rs = rstd[v];
    if (act) {
        float c, s;
        rope_angle(pos, v / H, i, hd, theta, &c, &s);
        float d1 = ld(dout, base + i), d2 = ld(dout, base + i + half);
        g1 = (d1 * c + d2 * s) * ld(w, i);
        g2 = (d2 * c - d1 * s) * ld(w, i + half);
        x1 = ld(x, base + i);
        x2 = ld(x, base + i + half);
    }
    float mean = block_sum(g1 * x1 * rs + g2 * x2 * rs) / (float)hd;
    if (!act) return;
    dx[base + i] = tobf(rs * (g1 - x1 * rs * mean));
    dx[base + i + half] = tobf(rs * (g2 - x2 * rs * mean));
}

// rope_rotate rotates every pair (i, i+hd/2) of the nvec vectors of x by sign·angle:
// sign 1 is the forward, sign −1 (the transpose of the rotation) its backward.
__device__ __forceinline__ void rope_rotate(bf16* out, const bf16* x, const int* pos, long long nvec,
                                            long long H, long long hd, float theta, float sign) {
    // 32-bit division: the launcher keeps nvec·hd/2 below 2^31.
    unsigned half = (unsigned)hd / 2, n = (unsigned)(nvec * half);
    for (unsigned p = blockIdx.x * blockDim.x + threadIdx.x; p < n; p += gridDim.x * blockDim.x) {
        unsigned v32 = p / half;
        long long v = v32, base = v * hd;
        int i = (int)(p - v32 * half);
        float c, s;
        rope_angle(pos, v / H, i, hd, theta, &c, &s);
        s *= sign;
        float x1 = ld(x, base + i), x2 = ld(x, base + i + half);
        out[base + i] = tobf(x1 * c - x2 * s);
        out[base + i + half] = tobf(x2 * c + x1 * s);
    }
}

extern "C" __global__ void rope_fwd(bf16* out, const bf16* x, const int* pos, long long nvec,
                                    long long H, long long hd, float theta) {
    rope_rotate(out, x, pos, nvec, H, hd, theta, 1.f);
}

extern "C" __global__ void rope_bwd(bf16* dx, const bf16* dout, const int* pos, long long nvec,
                                    long long H, long long hd, float theta) {
    rope_rotate(dx, dout, pos, nvec, H, hd, theta, -1.f);
}
