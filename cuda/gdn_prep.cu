// The Gated DeltaNet core's inputs from the conv output and in_proj_a/b: per-head L2 norm of
// q and k (read as column ranges of the [T, conv_dim] fp32 conv output, written contiguous),
// and the gates g = -exp(A_log)·softplus(a + dt_bias), beta = sigmoid(b); with backwards.
#include "common.cuh"

// gdn_l2norm_fwd: for row r = (t, h) of rows = T·heads, out[r, :] = x·rinv with
// rinv = 1/sqrt(Σx² + 1e-6); x row at t·stride + h·n (x already offset to q's or k's
// columns), out [T, heads·n]. One block per row.
extern "C" __global__ void gdn_l2norm_fwd(float* out, float* rinv, const float* x, long long rows, long long n,
                                          long long heads, long long stride) {
    for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
        const float* xr = x + (r / heads) * stride + (r % heads) * n;
        float ss = 0.f;
        for (long long i = threadIdx.x; i < n; i += blockDim.x) ss += xr[i] * xr[i];
        float ri = rsqrtf(block_sum(ss) + 1e-6f);
        if (threadIdx.x == 0) rinv[r] = ri;
        for (long long i = threadIdx.x; i < n; i += blockDim.x) out[r * n + i] = xr[i] * ri;
    }
}

// gdn_l2norm_bwd: dx (same strided layout as x, overwritten) = rinv·(g − x·rinv·Σ g·x·rinv).
extern "C" __global__ void gdn_l2norm_bwd(float* dx, const float* g, const float* x, const float* rinv,
                                          long long rows, long long n, long long heads, long long stride) {
    for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
        long long o = (r / heads) * stride + (r % heads) * n;
        float ri = rinv[r], dot = 0.f;
        for (long long i = threadIdx.x; i < n; i += blockDim.x) dot += g[r * n + i] * x[o + i] * ri;
        dot = block_sum(dot);
        for (long long i = threadIdx.x; i < n; i += blockDim.x) dx[o + i] = ri * (g[r * n + i] - x[o + i] * ri * dot);
    }
}

__device__ __forceinline__ float softplus_thr(float x) { return x > 20.f ? x : log1pf(expf(x)); }

// gdn_gates_fwd: over n = T·nv elements, head h = i % nv.
extern "C" __global__ void gdn_gates_fwd(float* g, float* beta, const bf16* a, const bf16* b, const float* a_log,
                                         const float* dt_bias, long long n, long long nv) {
    long long tid = blockIdx.x * (long long)blockDim.x + threadIdx.x, step = (long long)gridDim.x * blockDim.x;
    for (long long i = tid; i < n; i += step) {
        long long h = i % nv;
        g[i] = -expf(a_log[h]) * softplus_thr(ld(a, i) + dt_bias[h]);
        beta[i] = 1.f / (1.f + expf(-ld(b, i)));
    }
}

// gdn_gates_bwd: da = dg·(−exp(A_log))·sigmoid(a + dt_bias), db = dbeta·beta·(1 − beta).
extern "C" __global__ void gdn_gates_bwd(bf16* da, bf16* db, const float* dg, const float* dbeta, const bf16* a,
                                         const float* beta, const float* a_log, const float* dt_bias, long long n,
                                         long long nv) {
    long long tid = blockIdx.x * (long long)blockDim.x + threadIdx.x, step = (long long)gridDim.x * blockDim.x;
    for (long long i = tid; i < n; i += step) {
        long long h = i % nv;
        float s = 1.f / (1.f + expf(-(ld(a, i) + dt_bias[h])));
        da[i] = tobf(dg[i] * -expf(a_log[h]) * s);
        db[i] = tobf(dbeta[i] * beta[i] * (1.f - beta[i]));
    }
}
