// The gated attention's output gate (Qwen3.5/3.6 attn_output_gate): q_proj emits per head the
// query and then the gate (qg [T, H·2·hd]); y = o·sigmoid(gate) before o_proj, and its backward.
#include "common.cuh"

__device__ __forceinline__ long long gate_at(long long i, long long hd) {
    long long row = i / hd;  // (t, h)
    return row * 2 * hd + hd + i % hd;
}

// attn_gate_fwd: y, o [T·H·hd] bf16.
extern "C" __global__ void attn_gate_fwd(bf16* y, const bf16* o, const bf16* qg, long long n, long long hd) {
    long long tid = blockIdx.x * (long long)blockDim.x + threadIdx.x, step = (long long)gridDim.x * blockDim.x;
    for (long long i = tid; i < n; i += step) y[i] = tobf(ld(o, i) / (1.f + expf(-ld(qg, gate_at(i, hd)))));
}

// attn_gate_bwd: do = dy·sigmoid(gate); the gate half of dqg (the query half untouched) =
// dy·o·sigmoid'(gate).
extern "C" __global__ void attn_gate_bwd(bf16* dout, bf16* dqg, const bf16* dy, const bf16* o, const bf16* qg,
                                         long long n, long long hd) {
    long long tid = blockIdx.x * (long long)blockDim.x + threadIdx.x, step = (long long)gridDim.x * blockDim.x;
    for (long long i = tid; i < n; i += step) {
        long long gi = gate_at(i, hd);
        float s = 1.f / (1.f + expf(-ld(qg, gi))), d = ld(dy, i);
        dout[i] = tobf(d * s);
        dqg[gi] = tobf(d * ld(o, i) * s * (1.f - s));
    }
}
