package cuda

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestGemm(t *testing.T) {
	a := []float32{1, 2, 3, 4, 5, 6} // [2,3]
	b := []float32{1, 0, 0, 1, 1, 1} // [3,2]
	tests := []struct {
		name           string
		transA, transB bool
		a, b           []float32
		m, n, k        int
		want           []float32
	}{
		{"nn", false, false, a, b, 2, 2, 3, []float32{4, 5, 10, 11}},
		{"tn", true, false, []float32{1, 4, 2, 5, 3, 6}, b, 2, 2, 3, []float32{4, 5, 10, 11}},
		{"nt", false, true, a, []float32{1, 0, 1, 0, 1, 1}, 2, 2, 3, []float32{4, 5, 10, 11}},
	}
	for _, tc := range tests {
		c := []float32{1, 1, 1, 1}
		Gemm(tc.transA, tc.transB, tc.m, tc.n, tc.k, 2, tc.a, tc.b, 1, c)
		for i := range c {
			if got, want := c[i], 2*tc.want[i]+1; got != want {
				t.Errorf("%s: c[%d] = %v, want %v", tc.name, i, got, want)
			}
		}
	}
}

func TestLoRABackward(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	s := LoRAShape{T: 3, In: 5, Out: 4, Rank: 2, Scale: 2}
	x, w := randSlice(rng, s.T*s.In, 1), randSlice(rng, s.Out*s.In, 1)
	a, b := randSlice(rng, s.Rank*s.In, 1), randSlice(rng, s.Out*s.Rank, 1)
	y, xa := LoRAForward(x, w, a, b, s)
	dy := randSlice(rng, len(y), 1)
	dx, da, db := LoRABackward(dy, x, w, a, b, xa, s)
	loss := func() float64 { y, _ := LoRAForward(x, w, a, b, s); return dot(dy, y) }
	checkGrad(t, "dx", dx, numGrad(x, 1e-2, loss), 1e-4)
	checkGrad(t, "dA", da, numGrad(a, 1e-2, loss), 1e-4)
	checkGrad(t, "dB", db, numGrad(b, 1e-2, loss), 1e-4)
}

func TestDropout(t *testing.T) {
	const n, p = 200000, 0.05
	x := make([]float32, n)
	for i := range x {
		x[i] = 1
	}
	out := Dropout(x, 42, p)
	kept := 0
	for _, v := range out {
		if v != 0 {
			kept++
			if v != 1/(1-p) {
				t.Fatalf("kept value %v, want %v", v, 1/(1-p))
			}
		}
	}
	if got := float64(kept) / n; math.Abs(got-(1-p)) > 0.003 {
		t.Errorf("kept fraction %v, want about %v", got, 1-p)
	}
	if RelErr(Dropout(x, 42, p), out) != 0 {
		t.Error("same seed gave a different mask")
	}
	if RelErr(Dropout(x, 43, p), out) == 0 {
		t.Error("another seed gave the same mask")
	}
}

func TestAdamWFirstStep(t *testing.T) {
	// Step 1 with zero moments moves each parameter by lr·sign(g) (bias correction cancels
	// the betas), after the decoupled decay.
	p := []float32{1, -2, 0.5}
	g := []float32{0.3, -4, 1e-3}
	m, v := make([]float32, 3), make([]float32, 3)
	c := AdamWConfig{LR: 0.01, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.1, Step: 1, GradScale: 1}
	want := make([]float32, 3)
	for i := range p {
		d := 1 - c.LR*c.WeightDecay
		want[i] = p[i]*d - c.LR*float32(math.Copysign(1, float64(g[i])))
	}
	AdamW(p, m, v, g, c)
	if e := RelErr(p, want); e > 1e-5 {
		t.Errorf("p = %v, want %v", p, want)
	}
	if got, want := m[1], float32(-0.4); math.Abs(float64(got-want)) > 1e-6 {
		t.Errorf("m = %v, want %v", got, want)
	}
}

func TestGradNorm(t *testing.T) {
	if got, want := SumSquares([]float32{3}, []float32{4, 0}), 25.0; got != want {
		t.Errorf("SumSquares = %v, want %v", got, want)
	}
	tests := []struct {
		norm, max float64
		want      float32
	}{
		{5, 1, float32(1 / (5 + 1e-6))},
		{0.5, 1, 1},
		{5, 0, 1},
	}
	for _, tc := range tests {
		if got := ClipScale(tc.norm, tc.max); got != tc.want {
			t.Errorf("ClipScale(%v, %v) = %v, want %v", tc.norm, tc.max, got, tc.want)
		}
	}
}
