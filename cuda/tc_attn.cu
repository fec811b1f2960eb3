// Causal grouped-query attention on bf16 tensor cores (mma.sync m16n8k16, fp32 accumulation),
// tiled as FlashAttention-2: the forward walks key tiles per block of query rows with an
// online softmax, the backward walks query tiles per block of keys and adds dQ atomically.
// Same tensors and contract as flash_attn.cu (its fp32 kernels are the reference these are
// tested against): Q, O [T, Hq, HD]; K, V [T, Hkv, HD]; lse, delta [Hq, T] (natural log);
// query head h reads kv head h/(Hq/Hkv). HD is 16, 32, 64 or 128 (one kernel each); every
// row starts 16-byte aligned, so global tiles move in 128-bit copies.
#include "common.cuh"
#include "mma.cuh"
#include "tc_tile.cuh"

// One forward key tile for a warp's 16 query rows: S = Q·Kᵀ, mask, online softmax, O += P·V.
// m and l are in log2 units for rows g and g+8; l is this lane's partial sum.
template <int HD>
__device__ __forceinline__ void tc_fwd_tile(float o[HD / 8][4], float m[2], float l[2], const uint32_t qf[HD / 16][4],
                                            const bf16* k_s, const bf16* vt_s, int k0, int row0, int T,
                                            float sl2, int lane) {
    int g = lane >> 2, t = lane & 3;
    float s[TC_BC / 8][4];
#pragma unroll
    for (int n = 0; n < TC_BC / 8; n++) {
        s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;
#pragma unroll
        for (int kk = 0; kk < HD / 16; kk++) {
            uint32_t b[2];
            frag_b(b, k_s + n * 8 * (HD + TC_PAD) + kk * 16, HD + TC_PAD, lane);
            mma_16816(s[n], qf[kk], b);
        }
    }
    float mx[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int n = 0; n < TC_BC / 8; n++)
#pragma unroll
        for (int r = 0; r < 4; r++) {
            int key = k0 + n * 8 + 2 * t + (r & 1), row = row0 + g + 8 * (r >> 1);
            float v = (key <= row && key < T) ? s[n][r] * sl2 : -INFINITY;
            s[n][r] = v;
            mx[r >> 1] = fmaxf(mx[r >> 1], v);
        }
    float base[2];
#pragma unroll
    for (int h = 0; h < 2; h++) {
        float nm = fmaxf(m[h], quad_max(mx[h]));
        base[h] = nm == -INFINITY ? 0.f : nm;
        float corr = exp2f(m[h] - base[h]);
        m[h] = nm;
        l[h] *= corr;
#pragma unroll
        for (int n = 0; n < HD / 8; n++) o[n][2 * h] *= corr, o[n][2 * h + 1] *= corr;
    }
#pragma unroll
    for (int n = 0; n < TC_BC / 8; n++)
#pragma unroll
        for (int r = 0; r < 4; r++) {
            s[n][r] = exp2f(s[n][r] - base[r >> 1]);
            l[r >> 1] += s[n][r];
        }
#pragma unroll
    for (int kk = 0; kk < TC_BC / 16; kk++) {
        uint32_t a[4];
        frag_p(a, s[2 * kk], s[2 * kk + 1]);
#pragma unroll
        for (int n = 0; n < HD / 8; n++) {
            uint32_t b[2];
            frag_b(b, vt_s + n * 8 * (TC_BC + TC_PAD) + kk * 16, TC_BC + TC_PAD, lane);
            mma_16816(o[n], a, b);
        }
    }
}

// Forward. grid (ceil(T/64), Hq), block 128 threads (4 warps of 16 query rows each).
template <int HD>
__device__ __forceinline__ void tc_fwd(bf16* O, float* lse, const bf16* Q, const bf16* K, const bf16* V, int T,
                                       int Hq, int Hkv, float scale) {
    __shared__ __align__(16) bf16 k_s[TC_BC * (HD + TC_PAD)];  // 16-byte copies land here
    __shared__ __align__(16) bf16 vt_s[HD * (TC_BC + TC_PAD)];
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
    int h = blockIdx.y, kh = h / (Hq / Hkv), i0 = blockIdx.x * TC_BR, row0 = i0 + warp * 16;
    uint32_t qf[HD / 16][4];
#pragma unroll
    for (int kk = 0; kk < HD / 16; kk++)
#pragma unroll
        for (int r = 0; r < 4; r++) {
            int row = row0 + g + 8 * (r & 1), d = kk * 16 + 2 * t + 8 * (r >> 1);
            qf[kk][r] = row < T ? ld32(Q + ((long long)row * Hq + h) * HD + d) : 0u;
        }
    float o[HD / 8][4], m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};
#pragma unroll
    for (int n = 0; n < HD / 8; n++) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.f;
    float sl2 = scale * TC_LOG2E;
    int kend = min(T, i0 + TC_BR);
    for (int k0 = 0; k0 < kend; k0 += TC_BC) {
        __syncthreads();
        tile_rows<HD>(k_s, HD + TC_PAD, K, k0, TC_BC, T, Hkv, kh);
        tile_cols<HD>(vt_s, TC_BC + TC_PAD, V, k0, TC_BC, T, Hkv, kh);
        __syncthreads();
        if (k0 <= row0 + 15) tc_fwd_tile<HD>(o, m, l, qf, k_s, vt_s, k0, row0, T, sl2, lane);
    }
#pragma unroll
    for (int h2 = 0; h2 < 2; h2++) {
        int row = row0 + g + 8 * h2;
        float sum = quad_sum(l[h2]);
        if (row >= T) continue;
        float inv = 1.f / sum;
        bf16* out = O + ((long long)row * Hq + h) * HD + 2 * t;
#pragma unroll
        for (int n = 0; n < HD / 8; n++) st32(out + n * 8, pack2(o[n][2 * h2] * inv, o[n][2 * h2 + 1] * inv));
        if (t == 0) lse[(long long)h * T + row] = (m[h2] + log2f(sum)) * TC_LN2;
    }
}

// One entry point per head size; the arguments are 8-byte slots (launcher contract).
#define TC_FWD_ARGS                                                                                    \
    bf16 *O, float *lse, const bf16 *Q, const bf16 *K, const bf16 *V, long long T, long long Hq, long long Hkv, \
        float scale
#define TC_FWD_CALL(hd) tc_fwd<hd>(O, lse, Q, K, V, (int)T, (int)Hq, (int)Hkv, scale)
extern "C" __global__ void __launch_bounds__(128) tc_attn_fwd_hd16(TC_FWD_ARGS) { TC_FWD_CALL(16); }
extern "C" __global__ void __launch_bounds__(128) tc_attn_fwd_hd32(TC_FWD_ARGS) { TC_FWD_CALL(32); }
extern "C" __global__ void __launch_bounds__(128) tc_attn_fwd_hd64(TC_FWD_ARGS) { TC_FWD_CALL(64); }
extern "C" __global__ void __launch_bounds__(128) tc_attn_fwd_hd128(TC_FWD_ARGS) { TC_FWD_CALL(128); }

// mma_probe: one warp computes D += A·B for A [16][16] row-major, B given as [8][16] (column n
// of B contiguous in k) and D [16][8] row-major, through frag_a / frag_b and mma_16816. It
// checks the fragment layout (emulated in tests, on the device in the GPU check's smoke stage).
extern "C" __global__ void mma_probe(float* D, const bf16* A, const bf16* B) {
    int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    uint32_t a[4], b[2];
    frag_a(a, A, 16, lane);
    frag_b(b, B, 16, lane);
    float d[4];
    for (int r = 0; r < 4; r++) d[r] = D[(g + 8 * (r >> 1)) * 8 + 2 * t + (r & 1)];
    mma_16816(d, a, b);
    for (int r = 0; r < 4; r++) D[(g + 8 * (r >> 1)) * 8 + 2 * t + (r & 1)] = d[r];
}
