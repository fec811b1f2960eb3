// Tiles, constants and quad reductions shared by the tensor-core attention kernels.
#pragma once
#include "common.cuh"
#include "mma.cuh"

#define TC_BR 64   // query rows per forward block: 4 warps × 16
#define TC_BC 64   // keys per forward tile and per backward block: 4 warps × 16 in the backward
#define TC_BQ 32   // query rows per backward tile
#define TC_PAD 8   // shared-memory row padding (bf16): rows 16 bytes apart in the banks

#define TC_LOG2E 1.4426950408889634f
#define TC_LN2 0.6931471805599453f

// tile_rows copies rows [r0, r0+n) of a [T, heads, HD] tensor's head hh into dst[n][ld]
// (zeros past T), 16 bytes per thread and step.
template <int HD>
__device__ __forceinline__ void tile_rows(bf16* dst, int ld, const bf16* src, int r0, int n, int T, int heads,
                                          int hh) {
    for (int c = threadIdx.x; c < n * (HD / 8); c += blockDim.x) {
        int r = c / (HD / 8), d = (c % (HD / 8)) * 8;
        if (r0 + r < T) copy16(dst + r * ld + d, src + ((long long)(r0 + r) * heads + hh) * HD + d);
        else zero16(dst + r * ld + d);
    }
}

// tile_cols writes the same rows transposed: dst[HD][ld], dst[d][r] = row r, dim d.
// Consecutive threads take consecutive rows (n is 32 or 64), so a warp's 16-bit stores
// into one dst row are contiguous: no bank conflicts (the row-major mapping of tile_rows
// would put 16 lanes on one bank here).
template <int HD>
__device__ __forceinline__ void tile_cols(bf16* dst, int ld, const bf16* src, int r0, int n, int T, int heads,
                                          int hh) {
    for (int c = threadIdx.x; c < n * (HD / 8); c += blockDim.x) {
        int r = c % n, d = (c / n) * 8;
        bf16 v[8];
        if (r0 + r < T) load8(v, src + ((long long)(r0 + r) * heads + hh) * HD + d);
        else
            for (int e = 0; e < 8; e++) v[e] = tobf(0.f);
        for (int e = 0; e < 8; e++) dst[(d + e) * ld + r] = v[e];
    }
}

__device__ __forceinline__ float quad_max(float v) {
    v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, 1));
    return fmaxf(v, __shfl_xor_sync(0xffffffff, v, 2));
}

__device__ __forceinline__ float quad_sum(float v) {
    v += __shfl_xor_sync(0xffffffff, v, 1);
    return v + __shfl_xor_sync(0xffffffff, v, 2);
}

