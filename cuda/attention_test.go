package cuda

import (
	"math/rand/v2"
	"testing"
)

func TestAttentionFirstTokenIsValue(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	s := AttnShape{T: 3, QHeads: 4, KVHeads: 2, HeadDim: 8}
	q, k, v := randSlice(rng, 3*4*8, 1), randSlice(rng, 3*2*8, 1), randSlice(rng, 3*2*8, 1)
	out, _ := AttentionForward(q, k, v, s)
	// Token 0 attends only to itself: its output is its value row for each head's group.
	for h := 0; h < 4; h++ {
		got, want := out[h*8:(h+1)*8], v[(h/2)*8:(h/2+1)*8]
		if e := RelErr(got, want); e > 1e-6 {
			t.Errorf("head %d: token 0 output differs from its value by %v", h, e)
		}
	}
}

// TestAttentionClearPath checks the two attention formulations against each other: the
// clear path (scores by GEMM, causal softmax, GEMM with V) and the fused reference.
func TestAttentionClearPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	s := AttnShape{T: 7, QHeads: 4, KVHeads: 2, HeadDim: 8}
	q, k, v := randSlice(rng, 7*4*8, 1), randSlice(rng, 7*2*8, 1), randSlice(rng, 7*2*8, 1)
	want, _ := AttentionForward(q, k, v, s)
	scores := make([]float32, s.QHeads*s.T*s.T)
	for h := 0; h < s.QHeads; h++ {
		kh := h / 2
		for i := 0; i < s.T; i++ {
			for j := 0; j < s.T; j++ {
				var d float64
				for x := 0; x < s.HeadDim; x++ {
					d += float64(q[(i*s.QHeads+h)*8+x]) * float64(k[(j*s.KVHeads+kh)*8+x])
				}
				scores[(h*s.T+i)*s.T+j] = float32(d * s.Scale())
			}
		}
	}
	p := CausalSoftmaxForward(scores, s.QHeads, s.T)
	got := make([]float32, len(want))
	for h := 0; h < s.QHeads; h++ {
		for i := 0; i < s.T; i++ {
			for x := 0; x < s.HeadDim; x++ {
				var acc float64
				for j := 0; j < s.T; j++ {
					acc += float64(p[(h*s.T+i)*s.T+j]) * float64(v[(j*s.KVHeads+h/2)*8+x])
				}
				got[(i*s.QHeads+h)*8+x] = float32(acc)
			}
		}
	}
	if e := RelErr(got, want); e > 1e-6 {
		t.Errorf("clear path differs from fused reference by %v", e)
	}
	// The softmax backward against finite differences of Σ dp·softmax(scores).
	dp := randSlice(rng, len(p), 1)
	gotDS := CausalSoftmaxBackward(p, dp, s.QHeads, s.T, 1)
	wantDS := numGrad(scores, 1e-2, func() float64 { return dot(dp, CausalSoftmaxForward(scores, s.QHeads, s.T)) })
	checkGrad(t, "dscores", gotDS, wantDS, 1e-3)
}

func TestAttentionBackward(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	s := AttnShape{T: 5, QHeads: 4, KVHeads: 1, HeadDim: 4}
	q, k, v := randSlice(rng, 5*4*4, 1), randSlice(rng, 5*1*4, 1), randSlice(rng, 5*1*4, 1)
	out, lse := AttentionForward(q, k, v, s)
	dout := randSlice(rng, len(out), 1)
	dq, dk, dv := AttentionBackward(dout, q, k, v, out, lse, s)
	loss := func() float64 { o, _ := AttentionForward(q, k, v, s); return dot(dout, o) }
	checkGrad(t, "dq", dq, numGrad(q, 1e-2, loss), 1e-3)
	checkGrad(t, "dk", dk, numGrad(k, 1e-2, loss), 1e-3)
	checkGrad(t, "dv", dv, numGrad(v, 1e-2, loss), 1e-3)
}
