// Backward of the tensor-core attention (tc_attn.cu), FlashAttention-2 style: a block owns
// 64 keys of one kv head (a warp 16 of them), walks every query tile at or after its first
// key for each query head of the group, and keeps dK and dV in registers; dQ (fp32, zeroed
// beforehand) gets each tile's contribution by atomics. delta = rowsum(dO ∘ O) comes from
// tc_attn_delta. Dynamic shared memory: tc_bwd_smem(HD) bytes (kernels.TCBwdSmem).
#include "common.cuh"
#include "mma.cuh"
#include "tc_tile.cuh"

// delta[h*T+i] = Σ_d dO[i,h,d]·O[i,h,d]: one warp per (i, h) row, 128-bit loads. grid
// ceil(T·Hq/8), block 256.
extern "C" __global__ void __launch_bounds__(256) tc_attn_delta(float* delta, const bf16* O, const bf16* dO,
                                                                long long T, long long Hq, long long hd) {
    int lane = threadIdx.x & 31;
    long long v = (long long)blockIdx.x * 8 + (threadIdx.x >> 5);
    if (v >= T * Hq) return;
    float s = 0.f;
    for (int d = lane * 8; d < hd; d += 256) {
        bf16 a[8], b[8];
        load8(a, O + v * hd + d);
        load8(b, dO + v * hd + d);
        for (int e = 0; e < 8; e++) s += __bfloat162float(a[e]) * __bfloat162float(b[e]);
    }
    s = warp_sum(s);
    int hq = (int)Hq, i = (int)v / hq, h = (int)v - i * hq;
    if (lane == 0) delta[(long long)h * T + i] = s;
}

// Shared-memory layout of the backward, in bf16 elements (then lse and delta in fp32).
template <int HD>
struct TcBwdSmem {
    static constexpr int LK = HD + TC_PAD, LT = TC_BC + TC_PAD, LQ = TC_BQ + TC_PAD;
    static constexpr int k = 0, v = k + TC_BC * LK, kt = v + TC_BC * LK, q = kt + HD * LT, dout = q + TC_BQ * LK,
                         qt = dout + TC_BQ * LK, dot = qt + HD * LQ, ds = dot + HD * LQ, end = ds + TC_BQ * LT;
};

// One query tile for a warp's 16 keys kw..kw+15 (block-local): Pᵀ and dSᵀ by products with
// K and V, then dV += Pᵀ·dO and dK += dSᵀ·Q; dS goes to ds_s[query][key] for the dQ product.
template <int HD>
__device__ __forceinline__ void tc_bwd_tile(float dk[HD / 8][4], float dv[HD / 8][4], bf16* sm, const float* lse_s,
                                            const float* delta_s, int k0, int kw, int q0, int T, float sl2,
                                            float scale, int lane) {
    using L = TcBwdSmem<HD>;
    int g = lane >> 2, t = lane & 3;
    bf16* ds_s = sm + L::ds;
    if (q0 + TC_BQ - 1 < k0 + kw) {  // every query of the tile precedes every key of the warp
        for (int e = lane; e < TC_BQ * 16; e += 32) ds_s[(e >> 4) * L::LT + kw + (e & 15)] = tobf(0.f);
        return;
    }
    float st[TC_BQ / 8][4], dp[TC_BQ / 8][4];
#pragma unroll
    for (int n = 0; n < TC_BQ / 8; n++)
#pragma unroll
        for (int r = 0; r < 4; r++) st[n][r] = dp[n][r] = 0.f;
#pragma unroll
    for (int kk = 0; kk < HD / 16; kk++) {
        uint32_t ak[4], av[4], b[2];
        frag_a(ak, sm + L::k + kw * L::LK + kk * 16, L::LK, lane);
        frag_a(av, sm + L::v + kw * L::LK + kk * 16, L::LK, lane);
#pragma unroll
        for (int n = 0; n < TC_BQ / 8; n++) {
            frag_b(b, sm + L::q + n * 8 * L::LK + kk * 16, L::LK, lane);
            mma_16816(st[n], ak, b);
            frag_b(b, sm + L::dout + n * 8 * L::LK + kk * 16, L::LK, lane);
            mma_16816(dp[n], av, b);
        }
    }
#pragma unroll
    for (int n = 0; n < TC_BQ / 8; n++)
#pragma unroll
        for (int r = 0; r < 4; r++) {
            int kl = kw + g + 8 * (r >> 1), ql = n * 8 + 2 * t + (r & 1), q = q0 + ql;
            float p = (q >= k0 + kl && q < T) ? exp2f(st[n][r] * sl2 - lse_s[ql]) : 0.f;
            float ds = p * (dp[n][r] - delta_s[ql]) * scale;
            st[n][r] = p;
            dp[n][r] = ds;
            ds_s[ql * L::LT + kl] = tobf(ds);
        }
#pragma unroll
    for (int kk = 0; kk < TC_BQ / 16; kk++) {
        uint32_t ap[4], as[4], b[2];
        frag_p(ap, st[2 * kk], st[2 * kk + 1]);
        frag_p(as, dp[2 * kk], dp[2 * kk + 1]);
#pragma unroll
        for (int n = 0; n < HD / 8; n++) {
            frag_b(b, sm + L::dot + n * 8 * L::LQ + kk * 16, L::LQ, lane);
            mma_16816(dv[n], ap, b);
            frag_b(b, sm + L::qt + n * 8 * L::LQ + kk * 16, L::LQ, lane);
            mma_16816(dk[n], as, b);
        }
    }
}

// dQ[q0..q0+31] += dS·K over the block's 64 keys: warp w takes query rows 16·(w%2) and half
// w/2 of the head dims, and adds its fp32 tile to dQ by atomics.
template <int HD>
__device__ __forceinline__ void tc_bwd_dq(float* dQ, const bf16* sm, int q0, int T, int Hq, int h, int warp,
                                          int lane) {
    using L = TcBwdSmem<HD>;
    int g = lane >> 2, t = lane & 3, mt = warp & 1, n0 = (warp >> 1) * (HD / 16);
    float acc[HD / 16][4];
#pragma unroll
    for (int j = 0; j < HD / 16; j++) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
#pragma unroll
    for (int kk = 0; kk < TC_BC / 16; kk++) {
        uint32_t a[4], b[2];
        frag_a(a, sm + L::ds + mt * 16 * L::LT + kk * 16, L::LT, lane);
#pragma unroll
        for (int j = 0; j < HD / 16; j++) {
            frag_b(b, sm + L::kt + (n0 + j) * 8 * L::LT + kk * 16, L::LT, lane);
            mma_16816(acc[j], a, b);
        }
    }
#pragma unroll
    for (int r = 0; r < 4; r++) {
        int q = q0 + mt * 16 + g + 8 * (r >> 1);
        if (q >= T) continue;
        float* row = dQ + ((long long)q * Hq + h) * HD + 2 * t + (r & 1);
#pragma unroll
        for (int j = 0; j < HD / 16; j++) atomicAdd(row + (n0 + j) * 8, acc[j][r]);
    }
}

// Backward. grid (ceil(T/64), Hkv), block 128 threads.
template <int HD>
__device__ __forceinline__ void tc_bwd(float* dQ, bf16* dK, bf16* dV, const bf16* Q, const bf16* K, const bf16* V,
                                       const bf16* dO, const float* lse, const float* delta, int T, int Hq, int Hkv,
                                       float scale, bf16* sm) {
    using L = TcBwdSmem<HD>;
    float* lse_s = reinterpret_cast<float*>(sm + L::end);
    float* delta_s = lse_s + TC_BQ;
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
    int kh = blockIdx.y, grp = Hq / Hkv, k0 = blockIdx.x * TC_BC, kw = warp * 16;
    tile_rows<HD>(sm + L::k, L::LK, K, k0, TC_BC, T, Hkv, kh);
    tile_rows<HD>(sm + L::v, L::LK, V, k0, TC_BC, T, Hkv, kh);
    tile_cols<HD>(sm + L::kt, L::LT, K, k0, TC_BC, T, Hkv, kh);
    float dk[HD / 8][4], dv[HD / 8][4];
#pragma unroll
    for (int n = 0; n < HD / 8; n++)
#pragma unroll
        for (int r = 0; r < 4; r++) dk[n][r] = dv[n][r] = 0.f;
    float sl2 = scale * TC_LOG2E;
    for (int h = kh * grp; h < (kh + 1) * grp; h++)
        for (int q0 = k0; q0 < T; q0 += TC_BQ) {
            __syncthreads();
            tile_rows<HD>(sm + L::q, L::LK, Q, q0, TC_BQ, T, Hq, h);
            tile_rows<HD>(sm + L::dout, L::LK, dO, q0, TC_BQ, T, Hq, h);
            tile_cols<HD>(sm + L::qt, L::LQ, Q, q0, TC_BQ, T, Hq, h);
            tile_cols<HD>(sm + L::dot, L::LQ, dO, q0, TC_BQ, T, Hq, h);
            for (int c = threadIdx.x; c < TC_BQ; c += blockDim.x) {
                bool ok = q0 + c < T;
                lse_s[c] = ok ? lse[(long long)h * T + q0 + c] * TC_LOG2E : 0.f;
                delta_s[c] = ok ? delta[(long long)h * T + q0 + c] : 0.f;
            }
            __syncthreads();
            tc_bwd_tile<HD>(dk, dv, sm, lse_s, delta_s, k0, kw, q0, T, sl2, scale, lane);
            __syncthreads();
            tc_bwd_dq<HD>(dQ, sm, q0, T, Hq, h, warp, lane);
        }
#pragma unroll
    for (int h2 = 0; h2 < 2; h2++) {
        int key = k0 + kw + g + 8 * h2;
        if (key >= T) continue;
        long long off = ((long long)key * Hkv + kh) * HD + 2 * t;
#pragma unroll
        for (int n = 0; n < HD / 8; n++) {
            st32(dK + off + n * 8, pack2(dk[n][2 * h2], dk[n][2 * h2 + 1]));
            st32(dV + off + n * 8, pack2(dv[n][2 * h2], dv[n][2 * h2 + 1]));
        }
    }
}

#ifdef MASS_EMU
#define TC_SMEM_DECL bf16* tc_smem = reinterpret_cast<bf16*>(emu_dynamic_smem());
#else
#define TC_SMEM_DECL                                         \
    extern __shared__ __align__(16) unsigned char tc_smem_raw[]; \
    bf16* tc_smem = reinterpret_cast<bf16*>(tc_smem_raw);
#endif

#define TC_BWD_ARGS                                                                                        \
    float *dQ, bf16 *dK, bf16 *dV, const bf16 *Q, const bf16 *K, const bf16 *V, const bf16 *dO, const float *lse, \
        const float *delta, long long T, long long Hq, long long Hkv, float scale
#define TC_BWD_CALL(hd)                                                                                  \
    TC_SMEM_DECL                                                                                         \
    tc_bwd<hd>(dQ, dK, dV, Q, K, V, dO, lse, delta, (int)T, (int)Hq, (int)Hkv, scale, tc_smem)
extern "C" __global__ void __launch_bounds__(128) tc_attn_bwd_hd16(TC_BWD_ARGS) { TC_BWD_CALL(16); }
extern "C" __global__ void __launch_bounds__(128) tc_attn_bwd_hd32(TC_BWD_ARGS) { TC_BWD_CALL(32); }
extern "C" __global__ void __launch_bounds__(128) tc_attn_bwd_hd64(TC_BWD_ARGS) { TC_BWD_CALL(64); }
extern "C" __global__ void __launch_bounds__(128) tc_attn_bwd_hd128(TC_BWD_ARGS) { TC_BWD_CALL(128); }
