//go:build masscudaemu

package emu

import (
	"math/rand/v2"
	"testing"

	"github.com/mass-dev/mass/cuda"
)

func TestFlashAttention(t *testing.T) {
	for _, s := range []cuda.AttnShape{
		{T: 37, QHeads: 4, KVHeads: 2, HeadDim: 16},
		{T: 33, QHeads: 2, KVHeads: 1, HeadDim: 128},
	} {
		e, r := newEnv(t), rand.New(rand.NewPCG(9, uint64(s.HeadDim)))
		nq, nkv := s.T*s.QHeads*s.HeadDim, s.T*s.KVHeads*s.HeadDim
		q, k, v, dout := randBF16(r, nq, 1), randBF16(r, nkv, 1), randBF16(r, nkv, 1), randBF16(r, nq, 1)
		out, lse := cuda.AttentionForward(q, k, v, s)
		dq, dk, dv := cuda.AttentionBackward(dout, q, k, v, out, lse, s)
		qp, kp, vp, dop := e.bf16(q), e.bf16(k), e.bf16(v), e.bf16(dout)
		op, lp := e.out(2*nq), e.out(4*s.QHeads*s.T)
		sc := float32(s.Scale())
		e.launch("flash_attn_fwd", [3]int{(s.T + 15) / 16, s.QHeads, 1}, 128, 0,
			P(op), P(lp), P(qp), P(kp), P(vp), I(s.T), I(s.QHeads), I(s.KVHeads), I(s.HeadDim), F(sc))
		e.check("flash_attn_fwd", op.GetBF16(nq), out, tb)
		e.check("flash_attn_fwd lse", lp.GetF32(s.QHeads*s.T), lse, tf)
		delta, dq32 := e.out(4*s.QHeads*s.T), e.f32(make([]float32, nq))
		dkp, dvp, dqp := e.out(2*nkv), e.out(2*nkv), e.out(2*nq)
		e.launch("flash_attn_bwd_delta", g1(s.T*s.QHeads), 32, 0, P(delta), P(op), P(dop), I(s.T), I(s.QHeads), I(s.HeadDim))
		smem := (4*32*(s.HeadDim+1) + 2*s.HeadDim) * 4
		e.launch("flash_attn_bwd", [3]int{(s.T + 31) / 32, s.KVHeads, 1}, 32, smem,
			P(dq32), P(dkp), P(dvp), P(qp), P(kp), P(vp), P(dop), P(lp), P(delta),
			I(s.T), I(s.QHeads), I(s.KVHeads), I(s.HeadDim), F(sc))
		e.launch("cast_f32_bf16", g1(1), 256, 0, P(dqp), P(dq32), I(nq))
		e.check("flash_attn_bwd dq", dqp.GetBF16(nq), dq, tb)
		e.check("flash_attn_bwd dk", dkp.GetBF16(nkv), dk, tb)
		e.check("flash_attn_bwd dv", dvp.GetBF16(nkv), dv, tb)
	}
}

func TestCausalSoftmax(t *testing.T) {
	e, r := newEnv(t), rand.New(rand.NewPCG(10, 11))
	const heads, tn = 3, 45
	s := randBF16(r, heads*tn*tn, 2)
	want := cuda.CausalSoftmaxForward(s, heads, tn)
	dp := randBF16(r, len(s), 1)
	pq := e.out(2 * len(s))
	e.launch("softmax_causal_fwd", g1(heads*tn), 256, 0, P(pq), P(e.f32(s)), I(heads*tn), I(tn))
	got := pq.GetBF16(len(s))
	e.check("softmax_causal_fwd", got, want, tb)
	wantDS := cuda.CausalSoftmaxBackward(got, dp, heads, tn, 0.125)
	ds := e.out(2 * len(s))
	e.launch("softmax_causal_bwd", g1(heads*tn), 256, 0, P(ds), P(pq), P(e.f32(dp)), I(heads*tn), I(tn), F(0.125))
	e.check("softmax_causal_bwd", ds.GetBF16(len(s)), wantDS, tb)
}

// TestCrossEntropyKernels drives the chunk kernels as kernels.LMHeadCE does, with the
// logits chunks made by the reference GEMM, and compares with the full-logit reference.
func TestCrossEntropyKernels(t *testing.T) {
	e, r := newEnv(t), rand.New(rand.NewPCG(12, 13))
	const tn, d, v, chunk = 6, 16, 300, 128
	x, w := randBF16(r, tn*d, 1), randBF16(r, v*d, 0.5)
	targets := []int32{5, cuda.IgnoreTarget, 299, 0, 128, 127}
	want := cuda.LMHeadCrossEntropy(x, w, targets, d, v)
	m, s, zt := e.out(4*tn), e.out(4*tn), e.out(4*tn)
	tg := e.i32(targets)
	e.launch("ce_init", g1(1), 256, 0, P(m), P(s), P(zt), I(tn))
	logits := func(v0, n int) []float32 {
		l := make([]float32, tn*n)
		cuda.Gemm(false, true, tn, n, d, 1, x, w[v0*d:(v0+n)*d], 0, l)
		return l
	}
	for v0 := 0; v0 < v; v0 += chunk {
		n := min(chunk, v-v0)
		e.launch("ce_chunk_update", g1(tn), 256, 0, P(m), P(s), P(zt), P(e.f32(logits(v0, n))), P(tg), I(tn), I(n), I(v0))
	}
	loss, lse, total := e.out(4*tn), e.out(4*tn), e.f32([]float32{0})
	e.launch("ce_finalize", g1(1), 256, 0, P(loss), P(lse), P(total), P(m), P(s), P(zt), P(tg), I(tn), F(0.2))
	e.check("ce loss", total.GetF32(1), []float32{float32(want.Loss)}, tf)
	e.check("ce lse", lse.GetF32(tn), want.LSE, tf)
	dx := make([]float32, tn*d)
	gotLSE := lse.GetF32(tn)
	for v0 := 0; v0 < v; v0 += chunk {
		n := min(chunk, v-v0)
		dl := e.out(2 * tn * n)
		e.launch("ce_chunk_grad", g1(2), 256, 0, P(dl), P(e.f32(logits(v0, n))), P(lse), P(tg), I(tn), I(n), I(v0), F(0.2))
		e.check("ce_chunk_grad", dl.GetBF16(tn*n), cuda.CEChunkGrad(logits(v0, n), gotLSE, n, v0, targets, 0.2), tb)
		cuda.Gemm(false, false, tn, d, n, 1, dl.GetBF16(tn*n), w[v0*d:(v0+n)*d], 1, dx)
	}
	e.check("ce dx", dx, want.DX, tb)
}
