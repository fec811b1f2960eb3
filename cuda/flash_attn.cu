// Tiled causal grouped-query attention that never materializes the score matrix
// (flash-attention style, scalar FP32 arithmetic; head_dim <= 128).
// Q, O: [T, Hq, hd]; K, V: [T, Hkv, hd]; lse, delta: [Hq, T]; query head h uses kv head h/(Hq/Hkv).
#include "common.cuh"

#define FA_BR 16   // query rows per forward block (4 warps x 4 rows)
#define FA_BC 32   // keys per tile: one key per lane
#define FA_MAXHD 128
#define FA_DPL (FA_MAXHD / 32)  // head dims per lane

// Forward. grid (ceil(T/FA_BR), Hq), block 128 threads.
extern "C" __global__ void __launch_bounds__(128) flash_attn_fwd(
    bf16* O, float* lse, const bf16* Q, const bf16* K, const bf16* V, long long T, long long Hq,
    long long Hkv, long long hd, float scale) {
    __shared__ float q_s[FA_BR][FA_MAXHD];
    __shared__ float k_s[FA_BC][FA_MAXHD + 1];
    __shared__ float v_s[FA_BC][FA_MAXHD];
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    long long h = blockIdx.y, kh = h / (Hq / Hkv), i0 = (long long)blockIdx.x * FA_BR;
    int hd32 = (int)hd;  // 32-bit division in the tile loads
    for (int e = threadIdx.x; e < FA_BR * hd32; e += blockDim.x) {
        int r = e / hd32, d = e - r * hd32;
        long long i = i0 + r;
        q_s[r][d] = i < T ? ld(Q, (i * Hq + h) * hd + d) : 0.f;
    }
    float m[4], l[4], acc[4][FA_DPL];
#pragma unroll
    for (int rr = 0; rr < 4; rr++) {
        m[rr] = -INFINITY;
        l[rr] = 0.f;
#pragma unroll
        for (int c = 0; c < FA_DPL; c++) acc[rr][c] = 0.f;
    }
    long long kend = min(T, i0 + FA_BR);
    for (long long k0 = 0; k0 < kend; k0 += FA_BC) {
        __syncthreads();
        for (int e = threadIdx.x; e < FA_BC * hd32; e += blockDim.x) {
            int r = e / hd32, d = e - r * hd32;
            long long j = k0 + r;
            bool ok = j < T;
            k_s[r][d] = ok ? ld(K, (j * Hkv + kh) * hd + d) : 0.f;
            v_s[r][d] = ok ? ld(V, (j * Hkv + kh) * hd + d) : 0.f;
        }
        __syncthreads();
#pragma unroll
        for (int rr = 0; rr < 4; rr++) {
            int r = warp * 4 + rr;
            long long i = i0 + r, j = k0 + lane;
            if (i >= T) continue;
            float sc = -INFINITY;
            if (j <= i) {
                float d0 = 0.f;
                for (int d = 0; d < hd; d++) d0 += q_s[r][d] * k_s[lane][d];
                sc = d0 * scale;
            }
            float tm = warp_max(sc);
            if (tm == -INFINITY) continue;
            float nm = fmaxf(m[rr], tm);
            float p = sc == -INFINITY ? 0.f : expf(sc - nm);
            float corr = expf(m[rr] - nm);
            l[rr] = l[rr] * corr + warp_sum(p);
            m[rr] = nm;
#pragma unroll
            for (int c = 0; c < FA_DPL; c++) acc[rr][c] *= corr;
            for (int jj = 0; jj < FA_BC; jj++) {
                float pj = __shfl_sync(0xffffffff, p, jj);
#pragma unroll
                for (int c = 0; c < FA_DPL; c++) {
                    int d = lane + 32 * c;
                    if (d < hd) acc[rr][c] += pj * v_s[jj][d];
                }
            }
        }
    }
#pragma unroll
    for (int rr = 0; rr < 4; rr++) {
        long long i = i0 + warp * 4 + rr;
        if (i >= T) continue;
#pragma unroll
        for (int c = 0; c < FA_DPL; c++) {
            int d = lane + 32 * c;
            if (d < hd) O[(i * Hq + h) * hd + d] = tobf(acc[rr][c] / l[rr]);
        }
        if (lane == 0) lse[h * T + i] = m[rr] + logf(l[rr]);
    }
}

// delta[h*T+i] = sum_d dO[i,h,d] * O[i,h,d]. grid T*Hq blocks of 32 threads.
extern "C" __global__ void flash_attn_bwd_delta(float* delta, const bf16* O, const bf16* dO,
                                                long long T, long long Hq, long long hd) {
    long long v = blockIdx.x;
    if (v >= T * Hq) return;
    float s = 0.f;
    for (long long d = threadIdx.x; d < hd; d += 32) s += ld(O, v * hd + d) * ld(dO, v * hd + d);
    s = warp_sum(s);
    long long i = v / Hq, h = v % Hq;
    if (threadIdx.x == 0) delta[h * T + i] = s;
}

// Backward. grid (ceil(T/FA_BC), Hkv), one warp per block; lane l owns key k0+l.
// dQ is fp32 and must be zeroed beforehand (atomic accumulation); dK, dV are written in bf16.
// Dynamic shared memory: (4*FA_BC*(hd+1) + 2*hd) floats.
extern "C" __global__ void __launch_bounds__(32) flash_attn_bwd(
    float* dQ, bf16* dK, bf16* dV, const bf16* Q, const bf16* K, const bf16* V, const bf16* dO,
    const float* lse, const float* delta, long long T, long long Hq, long long Hkv, long long hd,
    float scale) {
#ifdef MASS_EMU
    float* sm = emu_dynamic_smem();
#else
    extern __shared__ float sm[];
#endif
    long long st = hd + 1;
    float* k_s = sm;
    float* v_s = k_s + FA_BC * st;
    float* dk_s = v_s + FA_BC * st;
    float* dv_s = dk_s + FA_BC * st;
    float* q_r = dv_s + FA_BC * st;
    float* do_r = q_r + hd;
    int lane = threadIdx.x;
    long long kh = blockIdx.y, g = Hq / Hkv, k0 = (long long)blockIdx.x * FA_BC;
    for (int jj = 0; jj < FA_BC; jj++) {
        long long j = k0 + jj;
        for (long long d = lane; d < hd; d += 32) {
            bool ok = j < T;
            k_s[jj * st + d] = ok ? ld(K, (j * Hkv + kh) * hd + d) : 0.f;
            v_s[jj * st + d] = ok ? ld(V, (j * Hkv + kh) * hd + d) : 0.f;
            dk_s[jj * st + d] = 0.f;
            dv_s[jj * st + d] = 0.f;
        }
    }
    __syncwarp();
    long long j = k0 + lane;
    for (long long h = kh * g; h < (kh + 1) * g; h++) {
        for (long long i = k0; i < T; i++) {
            for (long long d = lane; d < hd; d += 32) {
                q_r[d] = ld(Q, (i * Hq + h) * hd + d);
                do_r[d] = ld(dO, (i * Hq + h) * hd + d);
            }
            __syncwarp();
            float s = 0.f, dp = 0.f;
            for (long long d = 0; d < hd; d++) {
                s += q_r[d] * k_s[lane * st + d];
                dp += do_r[d] * v_s[lane * st + d];
            }
            float p = (j <= i && j < T) ? expf(s * scale - lse[h * T + i]) : 0.f;
            float ds = p * (dp - delta[h * T + i]) * scale;
            for (long long d = 0; d < hd; d++) {
                dv_s[lane * st + d] += p * do_r[d];
                dk_s[lane * st + d] += ds * q_r[d];
            }
            for (long long d0 = 0; d0 < hd; d0 += 32) {
                long long d = d0 + lane;
                float a = 0.f;
                for (int l = 0; l < FA_BC; l++) {
                    float dsl = __shfl_sync(0xffffffff, ds, l);
                    if (d < hd) a += dsl * k_s[l * st + d];
                }
                if (d < hd) atomicAdd(&dQ[(i * Hq + h) * hd + d], a);
            }
            __syncwarp();
        }
    }
    __syncwarp();
    for (int jj = 0; jj < FA_BC; jj++) {
        long long jr = k0 + jj;
        if (jr >= T) break;
        for (long long d = lane; d < hd; d += 32) {
            dK[(jr * Hkv + kh) * hd + d] = tobf(dk_s[jj * st + d]);
            dV[(jr * Hkv + kh) * hd + d] = tobf(dv_s[jj * st + d]);
        }
    }
}
