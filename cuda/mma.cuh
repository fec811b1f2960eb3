// Warp-level bf16 tensor-core products and 16-byte (128-bit) loads and stores of 8 bf16.
//
// mma_16816 is PTX `mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32`: one warp
// multiplies a 16×16 bf16 tile A by a 16×8 bf16 tile B and adds the 16×8 fp32 product into
// D. Fragments (PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point type"),
// with g = lane/4 and t = lane%4, each .b32 register holding two adjacent k elements (the
// lower k in the low half):
//   A a[r]: row g + 8·(r%2),  k 2t + 8·(r/2) and +1
//   B b[r]: col g,            k 2t + 8·r     and +1
//   D d[r]: row g + 8·(r/2),  col 2t + r%2
// Every lane of the warp must call it (it is .sync.aligned).
#pragma once
#include "common.cuh"

#ifdef MASS_EMU
void emu_mma_16816(float d[4], const uint32_t a[4], const uint32_t b[2]);
__device__ __forceinline__ void mma_16816(float d[4], const uint32_t a[4], const uint32_t b[2]) {
    emu_mma_16816(d, a, b);
}
__device__ __forceinline__ uint32_t bf_bits(bf16 h) { return h.v; }
// The emulated accesses check the alignment the device's vector loads and stores need.
__device__ __forceinline__ uint32_t ld32(const bf16* p) {
    emu_check_align(p, 4);
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
}
__device__ __forceinline__ void st32(bf16* p, uint32_t v) {
    emu_check_align(p, 4);
    std::memcpy(p, &v, 4);
}
__device__ __forceinline__ void copy16(bf16* dst, const bf16* src) {
    emu_check_align(dst, 16);
    emu_check_align(src, 16);
    std::memcpy(dst, src, 16);
}
__device__ __forceinline__ void zero16(bf16* dst) {
    emu_check_align(dst, 16);
    std::memset(dst, 0, 16);
}
__device__ __forceinline__ void load8(bf16 v[8], const bf16* src) {
    emu_check_align(src, 16);
    std::memcpy(v, src, 16);
}
__device__ __forceinline__ void store8(bf16* dst, const bf16 v[8]) {
    emu_check_align(dst, 16);
    std::memcpy(dst, v, 16);
}
#else
#include <stdint.h>
__device__ __forceinline__ void mma_16816(float d[4], const uint32_t a[4], const uint32_t b[2]) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
__device__ __forceinline__ uint32_t bf_bits(bf16 h) { return __bfloat16_as_ushort(h); }
__device__ __forceinline__ uint32_t ld32(const bf16* p) { return *reinterpret_cast<const uint32_t*>(p); }
__device__ __forceinline__ void st32(bf16* p, uint32_t v) { *reinterpret_cast<uint32_t*>(p) = v; }
// 128-bit copies: dst and src 16-byte aligned.
__device__ __forceinline__ void copy16(bf16* dst, const bf16* src) {
    *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(src);
}
__device__ __forceinline__ void zero16(bf16* dst) { *reinterpret_cast<uint4*>(dst) = make_uint4(0, 0, 0, 0); }
// The local arrays are only 2-byte aligned: go through a uint4 value, which the compiler
// keeps in registers, rather than casting the array.
__device__ __forceinline__ void load8(bf16 v[8], const bf16* src) {
    uint4 u = *reinterpret_cast<const uint4*>(src);
    memcpy(v, &u, 16);
}
__device__ __forceinline__ void store8(bf16* dst, const bf16 v[8]) {
    uint4 u;
    memcpy(&u, v, 16);
    *reinterpret_cast<uint4*>(dst) = u;
}
#endif

// pack2 rounds lo and hi to bf16 and packs them into one fragment register (lo in the low half).
__device__ __forceinline__ uint32_t pack2(float lo, float hi) {
    return bf_bits(tobf(lo)) | (bf_bits(tobf(hi)) << 16);
}

// frag_a loads the A fragment of the 16×16 tile at p (row-major, row stride ld elements).
__device__ __forceinline__ void frag_a(uint32_t a[4], const bf16* p, int ld, int lane) {
    int g = lane >> 2, t = lane & 3;
    const bf16* r0 = p + g * ld + 2 * t;
    const bf16* r1 = r0 + 8 * ld;
    a[0] = ld32(r0);
    a[1] = ld32(r1);
    a[2] = ld32(r0 + 8);
    a[3] = ld32(r1 + 8);
}

// frag_b loads the B fragment of the 16(k)×8(n) tile whose column n lies at p + n·ld (k contiguous).
__device__ __forceinline__ void frag_b(uint32_t b[2], const bf16* p, int ld, int lane) {
    const bf16* c = p + (lane >> 2) * ld + 2 * (lane & 3);
    b[0] = ld32(c);
    b[1] = ld32(c + 8);
}

// frag_p turns two adjacent 16×8 fp32 accumulator tiles (k columns 0-7 and 8-15) into the
// A fragment of one 16×16 bf16 tile: the accumulator and A layouts line up register for register.
__device__ __forceinline__ void frag_p(uint32_t a[4], const float lo[4], const float hi[4]) {
    a[0] = pack2(lo[0], lo[1]);
    a[1] = pack2(lo[2], lo[3]);
    a[2] = pack2(hi[0], hi[1]);
    a[3] = pack2(hi[2], hi[3]);
}
