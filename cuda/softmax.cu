// Causal softmax for the clear attention path (scores from batched GEMMs).
// S holds already-scaled fp32 scores [rows = heads*T, T]; row r is query i = r % T and keeps
// columns j <= i. P is written in bf16 for the P·V GEMM, zeros above the diagonal.
#include "common.cuh"

extern "C" __global__ void softmax_causal_fwd(bf16* P, const float* S, long long rows, long long T) {
    long long r = blockIdx.x;
    if (r >= rows) return;
    long long i = r % T;
    const float* s = S + r * T;
    float m = -INFINITY;
    for (long long j = threadIdx.x; j <= i; j += blockDim.x) m = fmaxf(m, s[j]);
    m = block_max(m);
    float sum = 0.f;
    for (long long j = threadIdx.x; j <= i; j += blockDim.x) sum += expf(s[j] - m);
    sum = block_sum(sum);
    float inv = 1.f / sum;
    for (long long j = threadIdx.x; j < T; j += blockDim.x)
        P[r * T + j] = tobf(j <= i ? expf(s[j] - m) * inv : 0.f);
}

// dS = scale * P ∘ (dP − rowsum(dP ∘ P)), written in bf16 for the dQ and dK GEMMs.
extern "C" __global__ void softmax_causal_bwd(bf16* dS, const bf16* P, const float* dP,
                                              long long rows, long long T, float scale) {
    long long r = blockIdx.x;
    if (r >= rows) return;
    long long i = r % T;
    float dot = 0.f;
    for (long long j = threadIdx.x; j <= i; j += blockDim.x) dot += ld(P, r * T + j) * dP[r * T + j];
    dot = block_sum(dot);
    for (long long j = threadIdx.x; j < T; j += blockDim.x)
        dS[r * T + j] = tobf(j <= i ? scale * ld(P, r * T + j) * (dP[r * T + j] - dot) : 0.f);
}
