// The Qwen3.5/3.6 hybrid's elementwise and per-row pieces around the Gated DeltaNet core:
// the depthwise causal conv + SiLU over in_proj_qkv's output (with a [K-1, C] history state)
// and the gated RMSNorm of the core's output, each with its backward. Frozen weights are
// fp32 (tiny: C·K and head_dim values); activations in bf16, the core's side in fp32.
#include "common.cuh"

__device__ __forceinline__ float sigm(float x) { return 1.f / (1.f + expf(-x)); }

// conv_pre is Σ_j w[c,j]·x[t-K+1+j, c], rows before 0 from state (oldest first; 0 when null).
__device__ __forceinline__ float conv_pre(const bf16* x, const float* w, const float* state, long long t,
                                          long long c, long long C, long long K) {
    float s = 0.f;
    for (long long j = 0; j < K; j++) {
        long long r = t - K + 1 + j;
        float v = r >= 0 ? ld(x, r * C + c) : (state ? state[(K - 1 + r) * C + c] : 0.f);
        s += w[c * K + j] * v;
    }
    return s;
}

// causal_conv_silu_fwd: y [T, C] fp32 = silu(conv(x)), x [T, C] bf16, w [C, K]. Grid-stride.
extern "C" __global__ void causal_conv_silu_fwd(float* y, const bf16* x, const float* w, const float* state,
                                                long long T, long long C, long long K) {
    long long tid = blockIdx.x * (long long)blockDim.x + threadIdx.x, step = (long long)gridDim.x * blockDim.x;
    for (long long i = tid; i < T * C; i += step) {
        float p = conv_pre(x, w, state, i / C, i % C, C, K);
        y[i] = p * sigm(p);
    }
}

// causal_conv_silu_bwd: dx [T, C] bf16 from dy [T, C] fp32, each element gathering the K
// outputs it fed (pre recomputed), so no two threads write one element.
extern "C" __global__ void causal_conv_silu_bwd(bf16* dx, const float* dy, const bf16* x, const float* w,
                                                const float* state, long long T, long long C, long long K) {
    long long tid = blockIdx.x * (long long)blockDim.x + threadIdx.x, step = (long long)gridDim.x * blockDim.x;
    for (long long i = tid; i < T * C; i += step) {
        long long r = i / C, c = i % C;
        float acc = 0.f;
        for (long long j = 0; j < K; j++) {
            long long t = r + K - 1 - j;
            if (t >= T) continue;
            float p = conv_pre(x, w, state, t, c, C, K), s = sigm(p);
            acc += w[c * K + j] * dy[t * C + c] * s * (1.f + p * (1.f - s));
        }
        dx[i] = tobf(acc);
    }
}

// gated_rmsnorm_fwd: per row of n (one value head), y = x·rstd·w·silu(z), rstd saved;
// x [rows, n] fp32 (the core's output), z [rows, n] bf16 (in_proj_z), w [n] fp32. One block per row.
extern "C" __global__ void gated_rmsnorm_fwd(bf16* y, float* rstd, const float* x, const bf16* z, const float* w,
                                             long long rows, long long n, float eps) {
    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
        const float* xr = x + row * n;
        float ss = 0.f;
        for (long long i = threadIdx.x; i < n; i += blockDim.x) ss += xr[i] * xr[i];
        float r = rsqrtf(block_sum(ss) / (float)n + eps);
        if (threadIdx.x == 0) rstd[row] = r;
        for (long long i = threadIdx.x; i < n; i += blockDim.x) {
            float g = ld(z, row * n + i);
            y[row * n + i] = tobf(xr[i] * r * w[i] * g * sigm(g));
        }
    }
}

// gated_rmsnorm_bwd: dx fp32 and dz bf16 from dy bf16. With xn = x·rstd and a = dy·w·silu(z):
// dz = dy·xn·w·silu'(z), dx = rstd·(a − xn·mean(a·xn)).
extern "C" __global__ void gated_rmsnorm_bwd(float* dx, bf16* dz, const bf16* dy, const float* x, const bf16* z,
                                             const float* w, const float* rstd, long long rows, long long n) {
    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
        long long o = row * n;
        float r = rstd[row], dot = 0.f;
        for (long long i = threadIdx.x; i < n; i += blockDim.x) {
            float g = ld(z, o + i), s = sigm(g), xn = x[o + i] * r, d = ld(dy, o + i);
            dot += d * w[i] * g * s * xn;
            dz[o + i] = tobf(d * xn * w[i] * s * (1.f + g * (1.f - s)));
        }
        float m = block_sum(dot) / (float)n;
        for (long long i = threadIdx.x; i < n; i += blockDim.x) {
            float g = ld(z, o + i), xn = x[o + i] * r;
            dx[o + i] = r * (ld(dy, o + i) * w[i] * g * sigm(g) - xn * m);
        }
    }
}
