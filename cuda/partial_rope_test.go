package cuda

import (
	"math/rand/v2"
	"testing"
)

// TestPartialRoPEReference: with rot = hd the partial kernel's reference is Qwen3's
// qk_norm_rope reference; with rot < hd the dims past rot are the normalized input; the
// backward reference matches central differences of the forward (without bf16 rounding,
// which the backward treats as identity: the forward is evaluated on bf16-exact products).
func TestPartialRoPEReference(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	const tt, heads, hd = 3, 2, 16
	pos := []int32{0, 5, 9}
	x, w := randVec(r, tt*heads*hd, 1), randVec(r, hd, 1)
	full, fr := QKNormPartialRoPE(x, w, pos, heads, hd, hd, hd, 1e-6, 1e4)
	want, wr := QKNormRoPEForward(x, w, pos, heads, hd, 1e-6, 1e4)
	if err := CheckClose("rot=hd vs qk_norm_rope", full, want, 1e-6); err != nil {
		t.Error(err)
	}
	if err := CheckClose("rstd", fr, wr, 0); err != nil {
		t.Error(err)
	}
	const rot, stride = 4, 2 * hd // q read from the query half of a gated q_proj output
	qg := randVec(r, tt*heads*stride, 1)
	out, rstd := QKNormPartialRoPE(qg, w, pos, heads, hd, rot, stride, 1e-6, 1e4)
	for v := range rstd {
		for i := rot; i < hd; i++ {
			if got, want := out[v*hd+i], RoundBF16(qg[v*stride+i]*rstd[v])*w[i]; got != want {
				t.Fatalf("vector %d dim %d past the rotary dims: %v, want %v", v, i, got, want)
			}
		}
	}
	dout := randVec(r, tt*heads*hd, 1)
	dx := make([]float32, len(qg))
	QKNormPartialRoPEBackward(dx, dout, qg, rstd, w, pos, heads, hd, rot, stride, 1e4)
	num := dirGrad(qg, dout, func(v []float32) []float32 {
		o, _ := qkNormPartialRoPE(v, w, pos, heads, hd, rot, stride, 1e-6, 1e4, func(f float32) float32 { return f })
		return o
	})
	if err := CheckClose("partial rope dx", dx, num, 2e-3); err != nil {
		t.Error(err)
	}
}
