//go:build masscudaemu

package emu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/mass-dev/mass/cuda"
)

// tcBwdSmem mirrors TcBwdSmem in tc_attn_bwd.cu (kernels.TCBwdSmem is the launcher's copy).
func tcBwdSmem(hd int) int {
	const bc, bq, pad = 64, 32, 8
	lk, lt, lq := hd+pad, bc+pad, bq+pad
	return 2*(2*bc*lk+hd*lt+2*bq*lk+2*hd*lq+bq*lt) + 2*bq*4
}

type attnOut struct{ o, lse, dq, dk, dv []float32 }

// runTC runs tc_attn_fwd, tc_attn_delta and tc_attn_bwd as kernels.TCFwd/TCBwd launch them.
func runTC(e *env, s cuda.AttnShape, q, k, v, dout []float32) attnOut {
	nq, nkv := s.T*s.QHeads*s.HeadDim, s.T*s.KVHeads*s.HeadDim
	qp, kp, vp, dop := e.bf16(q), e.bf16(k), e.bf16(v), e.bf16(dout)
	op, lp := e.out(2*nq), e.out(4*s.QHeads*s.T)
	sc := float32(s.Scale())
	e.launch(fmt.Sprintf("tc_attn_fwd_hd%d", s.HeadDim), [3]int{(s.T + 63) / 64, s.QHeads, 1}, 128, 0,
		P(op), P(lp), P(qp), P(kp), P(vp), I(s.T), I(s.QHeads), I(s.KVHeads), F(sc))
	delta, dq32 := e.out(4*s.QHeads*s.T), e.f32(make([]float32, nq))
	dkp, dvp, dqp := e.out(2*nkv), e.out(2*nkv), e.out(2*nq)
	e.launch("tc_attn_delta", g1((s.T*s.QHeads+7)/8), 256, 0, P(delta), P(op), P(dop), I(s.T), I(s.QHeads), I(s.HeadDim))
	e.launch(fmt.Sprintf("tc_attn_bwd_hd%d", s.HeadDim), [3]int{(s.T + 63) / 64, s.KVHeads, 1}, 128, tcBwdSmem(s.HeadDim),
		P(dq32), P(dkp), P(dvp), P(qp), P(kp), P(vp), P(dop), P(lp), P(delta),
		I(s.T), I(s.QHeads), I(s.KVHeads), F(sc))
	e.launch("cast_f32_bf16", g1(1), 256, 0, P(dqp), P(dq32), I(nq))
	return attnOut{o: op.GetBF16(nq), lse: lp.GetF32(s.QHeads * s.T), dq: dqp.GetBF16(nq), dk: dkp.GetBF16(nkv), dv: dvp.GetBF16(nkv)}
}

// TestMMA checks the emulated mma.sync m16n8k16 against a plain product, with fragments
// packed per the PTX ISA layout (as frag_a / frag_b in mma.cuh read them from row-major tiles).
func TestMMA(t *testing.T) {
	e, r := newEnv(t), rand.New(rand.NewPCG(21, 22))
	a, b, c := randBF16(r, 16*16, 1), randBF16(r, 8*16, 1), randBF16(r, 16*8, 1)
	want := append([]float32(nil), c...)
	cuda.Gemm(false, true, 16, 8, 16, 1, a, b, 1, want) // b is [n][k]: column n of B is contiguous in k
	d := e.f32(c)
	e.launch("mma_probe", g1(1), 32, 0, P(d), P(e.bf16(a)), P(e.bf16(b)))
	e.check("mma_16816", d.GetF32(16*8), want, 1e-6)
}

// TestTensorCoreAttention checks the tensor-core kernels against the float64 reference,
// causal and grouped, every head size, with T not a multiple of the tiles.
func TestTensorCoreAttention(t *testing.T) {
	for _, s := range []cuda.AttnShape{
		{T: 37, QHeads: 4, KVHeads: 2, HeadDim: 16},
		{T: 70, QHeads: 2, KVHeads: 1, HeadDim: 32},
		{T: 129, QHeads: 2, KVHeads: 2, HeadDim: 64},
		{T: 33, QHeads: 2, KVHeads: 1, HeadDim: 128},
	} {
		t.Run(fmt.Sprintf("T%d_hd%d", s.T, s.HeadDim), func(t *testing.T) {
			e, r := newEnv(t), rand.New(rand.NewPCG(23, uint64(s.HeadDim)))
			nq, nkv := s.T*s.QHeads*s.HeadDim, s.T*s.KVHeads*s.HeadDim
			q, k, v, dout := randBF16(r, nq, 1), randBF16(r, nkv, 1), randBF16(r, nkv, 1), randBF16(r, nq, 1)
			out, lse := cuda.AttentionForward(q, k, v, s)
			dq, dk, dv := cuda.AttentionBackward(dout, q, k, v, out, lse, s)
			got := runTC(e, s, q, k, v, dout)
			e.check("tc_attn_fwd", got.o, out, tb)
			e.check("tc_attn_fwd lse", got.lse, lse, tf)
			e.check("tc_attn_bwd dq", got.dq, dq, tb)
			e.check("tc_attn_bwd dk", got.dk, dk, tb)
			e.check("tc_attn_bwd dv", got.dv, dv, tb)
		})
	}
}
