//go:build masscudaemu

// The emulator's runtime and launch table: every kernel of cuda/*.cu, compiled for the host.
#define MASS_EMU 1
#include "emu.h"

#include <ucontext.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

// Each CUDA thread of a block is a fiber (ucontext) on the calling OS thread. A fiber runs
// until it reaches a barrier (__syncthreads, __syncwarp, a shuffle) or ends; the scheduler
// releases a barrier when every live member of its group (block or warp) waits on it.
thread_local emu_dim3 threadIdx, blockIdx;
emu_dim3 blockDim, gridDim;

namespace {
enum { RUN, WAIT_BLOCK, WAIT_WARP, DONE };
struct Fiber {
    ucontext_t ctx;
    int state;
};
ucontext_t sched_ctx;
std::vector<Fiber> fibers;
std::vector<std::vector<char>> stacks;
int cur;
const std::function<void(const uint64_t*)>* cur_fn;
const uint64_t* cur_args;
float warp_buf[32][32];
std::vector<float> dyn_smem;
constexpr size_t kStack = 256 << 10;

void fiber_main() {
    (*cur_fn)(cur_args);
    fibers[cur].state = DONE;
    swapcontext(&fibers[cur].ctx, &sched_ctx);
}

void wait(int kind) {
    fibers[cur].state = kind;
    swapcontext(&fibers[cur].ctx, &sched_ctx);
}

// run_block runs one block to completion; false on a deadlock (a barrier never completes).
bool run_block(unsigned bx) {
    for (unsigned t = 0; t < bx; t++) {
        Fiber& f = fibers[t];
        f.state = RUN;
        getcontext(&f.ctx);
        f.ctx.uc_stack.ss_sp = stacks[t].data();
        f.ctx.uc_stack.ss_size = kStack;
        f.ctx.uc_link = &sched_ctx;
        makecontext(&f.ctx, fiber_main, 0);
    }
    for (;;) {
        for (unsigned t = 0; t < bx; t++) {
            if (fibers[t].state != RUN) continue;
            cur = (int)t;
            threadIdx = emu_dim3{t, 0, 0};
            swapcontext(&sched_ctx, &fibers[t].ctx);
        }
        bool all_done = true, released = false, block_ready = true;
        for (unsigned t = 0; t < bx; t++) {
            if (fibers[t].state != DONE) all_done = false;
            if (fibers[t].state == WAIT_WARP) block_ready = false;
        }
        if (all_done) return true;
        for (unsigned w = 0; w < bx / 32; w++) {
            bool ready = true, any = false;
            for (unsigned t = w * 32; t < w * 32 + 32; t++) {
                if (fibers[t].state == WAIT_WARP) any = true;
                else if (fibers[t].state != DONE) ready = false;
            }
            if (any && ready) {
                for (unsigned t = w * 32; t < w * 32 + 32; t++)
                    if (fibers[t].state == WAIT_WARP) fibers[t].state = RUN;
                released = true;
            }
        }
        if (!released && block_ready) {
            for (unsigned t = 0; t < bx; t++)
                if (fibers[t].state == WAIT_BLOCK) fibers[t].state = RUN, released = true;
        }
        if (!released) return false;
    }
}
}  // namespace

void __syncthreads() { wait(WAIT_BLOCK); }
void __syncwarp(unsigned) { wait(WAIT_WARP); }

float __shfl_sync(unsigned, float v, int src) {
    int w = cur / 32, l = cur % 32;
    warp_buf[w][l] = v;
    wait(WAIT_WARP);
    float r = warp_buf[w][src & 31];
    wait(WAIT_WARP);
    return r;
}

float __shfl_xor_sync(unsigned m, float v, int lane_mask) { return __shfl_sync(m, v, (cur % 32) ^ lane_mask); }

float* emu_dynamic_smem() { return dyn_smem.data(); }

namespace {
bool misaligned;
}
void emu_check_align(const void* p, unsigned bytes) {
    if (reinterpret_cast<uintptr_t>(p) % bytes != 0) misaligned = true;
}

namespace {
uint32_t mma_a[32][32][4], mma_b[32][32][2];

float half_of(uint32_t w, int k) { return __bfloat162float(bf16{(uint16_t)(k & 1 ? w >> 16 : w & 0xffff)}); }
}  // namespace

// The warp's lanes post their fragments, wait for each other, and each lane computes its own
// four outputs from everyone's fragments (layouts in mma.cuh), in fp32 with k ascending.
void emu_mma_16816(float d[4], const uint32_t a[4], const uint32_t b[2]) {
    int w = cur / 32, l = cur % 32;
    std::memcpy(mma_a[w][l], a, sizeof mma_a[w][l]);
    std::memcpy(mma_b[w][l], b, sizeof mma_b[w][l]);
    wait(WAIT_WARP);
    int g = l >> 2, t = l & 3;
    for (int r = 0; r < 4; r++) {
        int row = g + 8 * (r >> 1), col = 2 * t + (r & 1);
        float acc = d[r];
        for (int k = 0; k < 16; k++) {
            int kt = (k & 7) >> 1;
            float av = half_of(mma_a[w][(row & 7) * 4 + kt][(row >> 3) + 2 * (k >> 3)], k);
            float bv = half_of(mma_b[w][col * 4 + kt][k >> 3], k);
            acc += av * bv;
        }
        d[r] = acc;
    }
    wait(WAIT_WARP);
}

// Every kernel of cuda/*.cu, through the generated in-package copy (see gen.go).
#include "kernels_gen.h"

namespace {
using Args = const uint64_t*;
template <typename T>
T* P(uint64_t v) { return reinterpret_cast<T*>(v); }
long long I(uint64_t v) { return (long long)v; }
float F(uint64_t v) {
    uint32_t u = (uint32_t)v;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

const std::map<std::string, std::function<void(Args)>> table = {
    {"embedding_fwd", [](Args a) { embedding_fwd(P<bf16>(a[0]), P<const bf16>(a[1]), P<const int>(a[2]), I(a[3]), I(a[4]), I(a[5])); }},
    {"rmsnorm_fwd", [](Args a) { rmsnorm_fwd(P<bf16>(a[0]), P<bf16>(a[1]), P<float>(a[2]), P<const bf16>(a[3]), P<const bf16>(a[4]), P<const bf16>(a[5]), I(a[6]), I(a[7]), F(a[8])); }},
    {"rmsnorm_bwd", [](Args a) { rmsnorm_bwd(P<bf16>(a[0]), P<const bf16>(a[1]), P<const bf16>(a[2]), P<const float>(a[3]), P<const bf16>(a[4]), P<const bf16>(a[5]), I(a[6]), I(a[7])); }},
    {"qk_norm_rope_fwd", [](Args a) { qk_norm_rope_fwd(P<bf16>(a[0]), P<float>(a[1]), P<const bf16>(a[2]), P<const bf16>(a[3]), P<const int>(a[4]), I(a[5]), I(a[6]), I(a[7]), F(a[8]), F(a[9])); }},
    {"qk_norm_rope_bwd", [](Args a) { qk_norm_rope_bwd(P<bf16>(a[0]), P<const bf16>(a[1]), P<const bf16>(a[2]), P<const float>(a[3]), P<const bf16>(a[4]), P<const int>(a[5]), I(a[6]), I(a[7]), I(a[8]), F(a[9])); }},
    {"rope_fwd", [](Args a) { rope_fwd(P<bf16>(a[0]), P<const bf16>(a[1]), P<const int>(a[2]), I(a[3]), I(a[4]), I(a[5]), F(a[6])); }},
    {"rope_bwd", [](Args a) { rope_bwd(P<bf16>(a[0]), P<const bf16>(a[1]), P<const int>(a[2]), I(a[3]), I(a[4]), I(a[5]), F(a[6])); }},
    {"bias_fill_bf16", [](Args a) { bias_fill_bf16(P<bf16>(a[0]), P<const bf16>(a[1]), I(a[2]), I(a[3])); }},
    {"swiglu_fwd", [](Args a) { swiglu_fwd(P<bf16>(a[0]), P<const bf16>(a[1]), P<const bf16>(a[2]), I(a[3])); }},
    {"swiglu_bwd", [](Args a) { swiglu_bwd(P<bf16>(a[0]), P<bf16>(a[1]), P<const bf16>(a[2]), P<const bf16>(a[3]), P<const bf16>(a[4]), I(a[5])); }},
    {"softmax_causal_fwd", [](Args a) { softmax_causal_fwd(P<bf16>(a[0]), P<const float>(a[1]), I(a[2]), I(a[3])); }},
    {"softmax_causal_bwd", [](Args a) { softmax_causal_bwd(P<bf16>(a[0]), P<const bf16>(a[1]), P<const float>(a[2]), I(a[3]), I(a[4]), F(a[5])); }},
    {"cast_f32_bf16", [](Args a) { cast_f32_bf16(P<bf16>(a[0]), P<const float>(a[1]), I(a[2])); }},
    {"cast_bf16_f32", [](Args a) { cast_bf16_f32(P<float>(a[0]), P<const bf16>(a[1]), I(a[2])); }},
    {"fill_f32", [](Args a) { fill_f32(P<float>(a[0]), F(a[1]), I(a[2])); }},
    {"add_bf16", [](Args a) { add_bf16(P<bf16>(a[0]), P<const bf16>(a[1]), I(a[2])); }},
    {"fill_normal_bf16", [](Args a) { fill_normal_bf16(P<bf16>(a[0]), I(a[1]), I(a[2]), F(a[3])); }},
    {"adamw", [](Args a) { adamw(P<float>(a[0]), P<float>(a[1]), P<float>(a[2]), P<const float>(a[3]), I(a[4]), F(a[5]), F(a[6]), F(a[7]), F(a[8]), F(a[9]), F(a[10]), F(a[11]), F(a[12])); }},
    {"adamw_flat", [](Args a) { adamw_flat(P<float>(a[0]), P<float>(a[1]), P<float>(a[2]), P<float>(a[3]), P<bf16>(a[4]), P<const float>(a[5]), I(a[6]), F(a[7]), F(a[8]), F(a[9]), F(a[10]), F(a[11]), F(a[12]), F(a[13]), F(a[14])); }},
    {"sumsq", [](Args a) { sumsq(P<float>(a[0]), P<const float>(a[1]), I(a[2])); }},
    {"lora_dropout", [](Args a) { lora_dropout(P<bf16>(a[0]), P<const bf16>(a[1]), I(a[2]), I(a[3]), F(a[4])); }},
    {"tc_attn_fwd_hd16", [](Args a) { tc_attn_fwd_hd16(P<bf16>(a[0]), P<float>(a[1]), P<const bf16>(a[2]), P<const bf16>(a[3]), P<const bf16>(a[4]), I(a[5]), I(a[6]), I(a[7]), F(a[8])); }},
    {"tc_attn_bwd_hd16", [](Args a) { tc_attn_bwd_hd16(P<float>(a[0]), P<bf16>(a[1]), P<bf16>(a[2]), P<const bf16>(a[3]), P<const bf16>(a[4]), P<const bf16>(a[5]), P<const bf16>(a[6]), P<const float>(a[7]), P<const float>(a[8]), I(a[9]), I(a[10]), I(a[11]), F(a[12])); }},
    {"tc_attn_fwd_hd32", [](Args a) { tc_attn_fwd_hd32(P<bf16>(a[0]), P<float>(a[1]), P<const bf16>(a[2]), P<const bf16>(a[3]), P<const bf16>(a[4]), I(a[5]), I(a[6]), I(a[7]), F(a[8])); }},
    {"tc_attn_bwd_hd32", [](Args a) { tc_attn_bwd_hd32(P<float>(a[0]), P<bf16>(a[1]), P<bf16>(a[2]), P<const bf16>(a[3]), P<const bf16>(a[4]), P<const bf16>(a[5]), P<const bf16>(a[6]), P<const float>(a[7]), P<const float>(a[8]), I(a[9]), I(a[10]), I(a[11]), F(a[12])); }},
    {"tc_attn_fwd_hd64", [](Args a) { tc_attn_fwd_hd64(P<bf16>(a[0]), P<float>(a[1]), P<const bf16>(a[2]), P<const bf16>(a[3]), P<const bf16>(a[4]), I(a[5]), I(a[6]), I(a[7]), F(a[8])); }},
    {"tc_attn_bwd_hd64", [](Args a) { tc_attn_bwd_hd64(P<float>(a[0]), P<bf16>(a[1]), P<bf16>(a[2]), P<const bf16>(a[3]), P<const bf16>(a[4]), P<const bf16>(a[5]), P<const bf16>(a[6]), P<const float>(a[7]), P<const float>(a[8]), I(a[9]), I(a[10]), I(a[11]), F(a[12])); }},
    {"tc_attn_fwd_hd128", [](Args a) { tc_attn_fwd_hd128(P<bf16>(a[0]), P<float>(a[1]), P<const bf16>(a[2]), P<const bf16>(a[3]), P<const bf16>(a[4]), I(a[5]), I(a[6]), I(a[7]), F(a[8])); }},
    {"tc_attn_bwd_hd128", [](Args a) { tc_attn_bwd_hd128(P<float>(a[0]), P<bf16>(a[1]), P<bf16>(a[2]), P<const bf16>(a[3]), P<const bf16>(a[4]), P<const bf16>(a[5]), P<const bf16>(a[6]), P<const float>(a[7]), P<const float>(a[8]), I(a[9]), I(a[10]), I(a[11]), F(a[12])); }},
    {"mma_probe", [](Args a) { mma_probe(P<float>(a[0]), P<const bf16>(a[1]), P<const bf16>(a[2])); }},
    {"tc_attn_delta", [](Args a) { tc_attn_delta(P<float>(a[0]), P<const bf16>(a[1]), P<const bf16>(a[2]), I(a[3]), I(a[4]), I(a[5])); }},
    {"lora_dropout_add", [](Args a) { lora_dropout_add(P<bf16>(a[0]), P<const bf16>(a[1]), I(a[2]), I(a[3]), F(a[4])); }},
    {"ce_init", [](Args a) { ce_init(P<float>(a[0]), P<float>(a[1]), P<float>(a[2]), I(a[3])); }},
    {"ce_chunk_update", [](Args a) { ce_chunk_update(P<float>(a[0]), P<float>(a[1]), P<float>(a[2]), P<const float>(a[3]), P<const int>(a[4]), I(a[5]), I(a[6]), I(a[7])); }},
    {"ce_finalize", [](Args a) { ce_finalize(P<float>(a[0]), P<float>(a[1]), P<float>(a[2]), P<const float>(a[3]), P<const float>(a[4]), P<const float>(a[5]), P<const int>(a[6]), I(a[7]), F(a[8])); }},
    {"ce_rows", [](Args a) { ce_rows(P<bf16>(a[0]), P<float>(a[1]), P<float>(a[2]), P<float>(a[3]), P<const float>(a[4]), P<const int>(a[5]), I(a[6]), F(a[7]), F(a[8])); }},
    {"ce_chunk_grad", [](Args a) { ce_chunk_grad(P<bf16>(a[0]), P<const float>(a[1]), P<const float>(a[2]), P<const int>(a[3]), I(a[4]), I(a[5]), I(a[6]), F(a[7])); }},
    {"flash_attn_fwd", [](Args a) { flash_attn_fwd(P<bf16>(a[0]), P<float>(a[1]), P<const bf16>(a[2]), P<const bf16>(a[3]), P<const bf16>(a[4]), I(a[5]), I(a[6]), I(a[7]), I(a[8]), F(a[9])); }},
    {"flash_attn_bwd_delta", [](Args a) { flash_attn_bwd_delta(P<float>(a[0]), P<const bf16>(a[1]), P<const bf16>(a[2]), I(a[3]), I(a[4]), I(a[5])); }},
    {"flash_attn_bwd", [](Args a) { flash_attn_bwd(P<float>(a[0]), P<bf16>(a[1]), P<bf16>(a[2]), P<const bf16>(a[3]), P<const bf16>(a[4]), P<const bf16>(a[5]), P<const bf16>(a[6]), P<const float>(a[7]), P<const float>(a[8]), I(a[9]), I(a[10]), I(a[11]), I(a[12]), F(a[13])); }},
    {"causal_conv_silu_fwd", [](Args a) { causal_conv_silu_fwd(P<float>(a[0]), P<const bf16>(a[1]), P<const float>(a[2]), P<const float>(a[3]), I(a[4]), I(a[5]), I(a[6])); }},
    {"causal_conv_silu_bwd", [](Args a) { causal_conv_silu_bwd(P<bf16>(a[0]), P<const float>(a[1]), P<const bf16>(a[2]), P<const float>(a[3]), P<const float>(a[4]), I(a[5]), I(a[6]), I(a[7])); }},
    {"gated_rmsnorm_fwd", [](Args a) { gated_rmsnorm_fwd(P<bf16>(a[0]), P<float>(a[1]), P<const float>(a[2]), P<const bf16>(a[3]), P<const float>(a[4]), I(a[5]), I(a[6]), F(a[7])); }},
    {"gated_rmsnorm_bwd", [](Args a) { gated_rmsnorm_bwd(P<float>(a[0]), P<bf16>(a[1]), P<const bf16>(a[2]), P<const float>(a[3]), P<const bf16>(a[4]), P<const float>(a[5]), P<const float>(a[6]), I(a[7]), I(a[8])); }},
    {"gdn_l2norm_fwd", [](Args a) { gdn_l2norm_fwd(P<float>(a[0]), P<float>(a[1]), P<const float>(a[2]), I(a[3]), I(a[4]), I(a[5]), I(a[6])); }},
    {"gdn_l2norm_bwd", [](Args a) { gdn_l2norm_bwd(P<float>(a[0]), P<const float>(a[1]), P<const float>(a[2]), P<const float>(a[3]), I(a[4]), I(a[5]), I(a[6]), I(a[7])); }},
    {"gdn_gates_fwd", [](Args a) { gdn_gates_fwd(P<float>(a[0]), P<float>(a[1]), P<const bf16>(a[2]), P<const bf16>(a[3]), P<const float>(a[4]), P<const float>(a[5]), I(a[6]), I(a[7])); }},
    {"gdn_gates_bwd", [](Args a) { gdn_gates_bwd(P<bf16>(a[0]), P<bf16>(a[1]), P<const float>(a[2]), P<const float>(a[3]), P<const bf16>(a[4]), P<const float>(a[5]), P<const float>(a[6]), P<const float>(a[7]), I(a[8]), I(a[9])); }},
    {"attn_gate_fwd", [](Args a) { attn_gate_fwd(P<bf16>(a[0]), P<const bf16>(a[1]), P<const bf16>(a[2]), I(a[3]), I(a[4])); }},
    {"attn_gate_bwd", [](Args a) { attn_gate_bwd(P<bf16>(a[0]), P<bf16>(a[1]), P<const bf16>(a[2]), P<const bf16>(a[3]), P<const bf16>(a[4]), I(a[5]), I(a[6])); }},
    {"copy_cols_f32", [](Args a) { copy_cols_f32(P<float>(a[0]), I(a[1]), P<const float>(a[2]), I(a[3]), I(a[4]), I(a[5])); }},
    {"add_f32", [](Args a) { add_f32(P<float>(a[0]), P<const float>(a[1]), I(a[2])); }},
    {"qk_norm_prope_fwd", [](Args a) { qk_norm_prope_fwd(P<bf16>(a[0]), P<float>(a[1]), P<const bf16>(a[2]), P<const bf16>(a[3]), P<const int>(a[4]), I(a[5]), I(a[6]), I(a[7]), I(a[8]), I(a[9]), F(a[10]), F(a[11])); }},
    {"qk_norm_prope_bwd", [](Args a) { qk_norm_prope_bwd(P<bf16>(a[0]), P<const bf16>(a[1]), P<const bf16>(a[2]), P<const float>(a[3]), P<const bf16>(a[4]), P<const int>(a[5]), I(a[6]), I(a[7]), I(a[8]), I(a[9]), I(a[10]), F(a[11])); }},
    {"gdn_chunk_fwd", [](Args a) { gdn_chunk_fwd(P<float>(a[0]), P<float>(a[1]), P<float>(a[2]), P<const float>(a[3]), P<const float>(a[4]), P<const float>(a[5]), P<const float>(a[6]), P<const float>(a[7]), P<const float>(a[8]), P<float>(a[9]), I(a[10]), I(a[11]), I(a[12]), I(a[13]), I(a[14]), I(a[15]), F(a[16])); }},
    {"gdn_chunk_bwd", [](Args a) { gdn_chunk_bwd(P<float>(a[0]), P<float>(a[1]), P<float>(a[2]), P<float>(a[3]), P<float>(a[4]), P<float>(a[5]), P<const float>(a[6]), P<const float>(a[7]), P<const float>(a[8]), P<const float>(a[9]), P<const float>(a[10]), P<const float>(a[11]), P<const float>(a[12]), P<const float>(a[13]), P<float>(a[14]), I(a[15]), I(a[16]), I(a[17]), I(a[18]), I(a[19]), I(a[20]), F(a[21])); }},
};
}  // namespace

extern "C" int emu_launch(const char* name, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                          unsigned bz, unsigned long smem, const uint64_t* args) {
    auto it = table.find(name);
    if (it == table.end()) return 1;
    if (by != 1 || bz != 1 || bx % 32 != 0 || bx == 0 || bx > 1024) return 2;
    gridDim = emu_dim3{gx, gy, gz};
    blockDim = emu_dim3{bx, by, bz};
    dyn_smem.assign(smem / sizeof(float) + 4, 0.f);  // operator new: 16-byte aligned, as the device's
    fibers.resize(bx);
    if (stacks.size() < bx) stacks.resize(bx);
    for (unsigned t = 0; t < bx; t++) stacks[t].resize(kStack);
    cur_fn = &it->second;
    cur_args = args;
    misaligned = false;
    for (unsigned z = 0; z < gz; z++)
        for (unsigned y = 0; y < gy; y++)
            for (unsigned x = 0; x < gx; x++) {
                blockIdx = emu_dim3{x, y, z};
                if (!run_block(bx)) return 3;
            }
    return misaligned ? 4 : 0;
}
