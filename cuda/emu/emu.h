// CPU emulation of the CUDA features the mass kernels use, so that the unchanged kernel
// sources run on the host (one fiber per CUDA thread, blocks one after another) and
// their indexing can be checked against the Go references without a GPU. It models
// barriers, warp shuffles, shared memory and atomics, not the GPU's memory model or speed.
#pragma once
#define _GNU_SOURCE 1
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>

struct emu_dim3 {
    unsigned x = 1, y = 1, z = 1;
};
extern thread_local emu_dim3 threadIdx, blockIdx;
extern emu_dim3 blockDim, gridDim;

#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))

using std::max;
using std::min;

struct bf16 {
    uint16_t v;
};

inline float __bfloat162float(bf16 h) {
    uint32_t u = (uint32_t)h.v << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

inline bf16 __float2bfloat16(float f) {
    uint32_t b;
    std::memcpy(&b, &f, 4);
    if ((b & 0x7fffffffu) > 0x7f800000u) return bf16{(uint16_t)((b >> 16) | 0x40)};
    b += 0x7fffu + ((b >> 16) & 1u);
    return bf16{(uint16_t)(b >> 16)};
}

inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline float cospif(float x) { return std::cos((float)M_PI * x); }

void __syncthreads();
void __syncwarp(unsigned mask = 0xffffffffu);
float __shfl_sync(unsigned mask, float v, int src);
float __shfl_xor_sync(unsigned mask, float v, int lane_mask);
float* emu_dynamic_smem();
// emu_check_align records an access of bytes at p that the GPU would fault on (p not a
// multiple of bytes); the launch then fails.
void emu_check_align(const void* p, unsigned bytes);

inline float atomicAdd(float* p, float v) { return std::atomic_ref<float>(*p).fetch_add(v); }
