package cuda

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestCrossEntropyUniform(t *testing.T) {
	// Zero hidden states give uniform logits: the loss is log(vocab).
	x := make([]float32, 2*4)
	w := randSlice(rand.New(rand.NewPCG(1, 1)), 10*4, 1)
	res := LMHeadCrossEntropy(x, w, []int32{3, IgnoreTarget}, 4, 10)
	if got, want := res.Loss, math.Log(10); math.Abs(got-want) > 1e-9 {
		t.Errorf("loss = %v, want %v", got, want)
	}
	for _, v := range res.DX[4:] {
		if v != 0 {
			t.Fatalf("ignored token has gradient %v", res.DX[4:])
		}
	}
}

func TestCrossEntropyGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	const dim, vocab = 6, 23
	targets := []int32{4, IgnoreTarget, 22, 0}
	x, w := randSlice(rng, len(targets)*dim, 1), randSlice(rng, vocab*dim, 1)
	res := LMHeadCrossEntropy(x, w, targets, dim, vocab)
	want := numGrad(x, 1e-2, func() float64 { return LMHeadCrossEntropy(x, w, targets, dim, vocab).Loss })
	checkGrad(t, "dx", res.DX, want, 1e-3)
}

// TestCrossEntropyChunked runs the kernels' algorithm (online softmax over vocabulary
// chunks, chunk gradients multiplied back through the head) and compares it with the
// reference that holds every logit.
func TestCrossEntropyChunked(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	const dim, vocab = 8, 37
	targets := []int32{36, 0, IgnoreTarget, 17, 5}
	tn := len(targets)
	x, w := randSlice(rng, tn*dim, 1), randSlice(rng, vocab*dim, 1)
	want := LMHeadCrossEntropy(x, w, targets, dim, vocab)
	for _, chunk := range []int{1, 5, 16, 37} {
		st := NewCEState(tn)
		logitsOf := func(v0, c int) []float32 {
			l := make([]float32, tn*c)
			Gemm(false, true, tn, c, dim, 1, x, w[v0*dim:(v0+c)*dim], 0, l)
			return l
		}
		for v0 := 0; v0 < vocab; v0 += chunk {
			c := min(chunk, vocab-v0)
			st.Update(logitsOf(v0, c), c, v0, targets)
		}
		lse, loss := st.Finalize(targets)
		if e := RelErr(lse, want.LSE); e > 1e-6 {
			t.Errorf("chunk %d: lse relative error %v", chunk, e)
		}
		var mean float64
		for _, l := range loss {
			mean += float64(l) / 4
		}
		if math.Abs(mean-want.Loss) > 1e-5*want.Loss {
			t.Errorf("chunk %d: loss %v, want %v", chunk, mean, want.Loss)
		}
		dx := make([]float32, tn*dim)
		for v0 := 0; v0 < vocab; v0 += chunk {
			c := min(chunk, vocab-v0)
			d := CEChunkGrad(logitsOf(v0, c), lse, c, v0, targets, 1.0/4)
			Gemm(false, false, tn, dim, c, 1, d, w[v0*dim:(v0+c)*dim], 1, dx)
		}
		if e := RelErr(dx, want.DX); e > 1e-5 {
			t.Errorf("chunk %d: dx relative error %v", chunk, e)
		}
	}
}
