// Fused masked LM-head cross-entropy. The host walks the vocabulary in chunks: for each
// chunk a cuBLASLt GEMM writes logits [T, C] (fp32) into one reused buffer, ce_chunk_update
// folds them into a running max m, sum s and the target logit zt (online softmax), and
// ce_finalize turns the state into lse and the loss. The backward recomputes each chunk's
// logits and ce_chunk_grad writes d(logits) in bf16 for the dX GEMM; full logits are never
// stored. Targets < 0 are masked.
#include "common.cuh"

extern "C" __global__ void ce_init(float* m, float* s, float* zt, long long T) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < T;
         i += (long long)gridDim.x * blockDim.x) {
        m[i] = -INFINITY;
        s[i] = 0.f;
        zt[i] = 0.f;
    }
}

// One block per token row.
extern "C" __global__ void ce_chunk_update(float* m, float* s, float* zt, const float* logits,
                                           const int* tgt, long long T, long long C, long long v0) {
    long long t = blockIdx.x;
    if (t >= T) return;
    const float* row = logits + t * C;
    float cm = -INFINITY;
    for (long long c = threadIdx.x; c < C; c += blockDim.x) cm = fmaxf(cm, row[c]);
    cm = block_max(cm);
    float cs = 0.f;
    for (long long c = threadIdx.x; c < C; c += blockDim.x) cs += expf(row[c] - cm);
    cs = block_sum(cs);
    if (threadIdx.x == 0) {
        float om = m[t], nm = fmaxf(om, cm);
        s[t] = s[t] * expf(om - nm) + cs * expf(cm - nm);
        m[t] = nm;
        long long g = tgt[t];
        if (g >= v0 && g < v0 + C) zt[t] = row[g - v0];
    }
}

// loss[t] = lse - zt for supervised tokens, 0 otherwise; *total += scale * loss[t].
extern "C" __global__ void ce_finalize(float* loss, float* lse, float* total, const float* m,
                                       const float* s, const float* zt, const int* tgt,
                                       long long T, float scale) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < T;
         i += (long long)gridDim.x * blockDim.x) {
        float l = m[i] + logf(s[i]);
        lse[i] = l;
        float v = tgt[i] >= 0 ? l - zt[i] : 0.f;
        loss[i] = v;
        if (v != 0.f) atomicAdd(total, v * scale);
    }
}

extern "C" __global__ void ce_chunk_grad(bf16* dlogits, const float* logits, const float* lse,
                                         const int* tgt, long long T, long long C, long long v0,
                                         float scale) {
    long long n = T * C;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        long long t = i / C, c = i % C;
        long long g = tgt[t];
        float d = 0.f;
        if (g >= 0) {
            d = expf(logits[i] - lse[t]);
            if (g == v0 + c) d -= 1.f;
            d *= scale;
        }
        dlogits[i] = tobf(d);
    }
}

// ce_rows is the training path's single pass (fused linear cross-entropy, as Liger's):
// the host walks the tokens in chunks, a GEMM writes one chunk's full-vocabulary logits
// [rows, V] (fp32), and one block per row computes max, sum, lse, the loss and at once the
// gradient d(logits) = gscale·(softmax − onehot) in bf16 for the dX GEMM, so the backward
// needs no second logits GEMM. Targets < 0 are masked (zero loss and gradient).
extern "C" __global__ void ce_rows(bf16* dlogits, float* loss, float* lse, float* total,
                                   const float* logits, const int* tgt, long long V, float scale,
                                   float gscale) {
    long long t = blockIdx.x;
    const float* row = logits + t * V;
    float m = -INFINITY;
    for (long long c = threadIdx.x; c < V; c += blockDim.x) m = fmaxf(m, row[c]);
    m = block_max(m);
    float s = 0.f;
    for (long long c = threadIdx.x; c < V; c += blockDim.x) s += expf(row[c] - m);
    s = block_sum(s);
    float l = m + logf(s);
    long long g = tgt[t];
    if (threadIdx.x == 0) {
        lse[t] = l;
        float v = g >= 0 ? l - row[g] : 0.f;
        loss[t] = v;
        if (v != 0.f) atomicAdd(total, v * scale);
    }
    bf16* d = dlogits + t * V;
    for (long long c = threadIdx.x; c < V; c += blockDim.x) {
        float x = 0.f;
        if (g >= 0) {
            x = expf(row[c] - l);
            if (c == g) x -= 1.f;
            x *= gscale;
        }
        d[c] = tobf(x);
    }
}
