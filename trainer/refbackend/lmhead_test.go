package refbackend

import (
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"
)

// TestLMHeadCEMatchesUnfused holds the fused head+loss op to the obvious
// path: full logits x·Wᵀ, then MaskedCE.
func TestLMHeadCEMatchesUnfused(t *testing.T) {
	const T, D, V = 37, 8, 50 // T > headChunk so several chunks run
	rng := rand.New(rand.NewPCG(1, 1))
	x := make([]float64, T*D)
	w := make([]float64, V*D)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	for i := range w {
		w[i] = rng.NormFloat64()
	}
	labels := make([]int32, T)
	for i := range labels {
		labels[i] = int32(rng.IntN(V))
		if i%4 == 1 {
			labels[i] = -100
		}
	}
	wt := make([]float64, D*V)
	for v := 0; v < V; v++ {
		for d := 0; d < D; d++ {
			wt[d*V+v] = w[v*D+d]
		}
	}
	fused := &lmHeadCE{t: T, d: D, v: V, labels: labels,
		headT: tensor.New(tensor.WithShape(D, V), tensor.WithBacking(wt)),
		head:  tensor.New(tensor.WithShape(V, D), tensor.WithBacking(w))}
	var got [1]float64
	fused.forward([][]float64{x}, got[:])

	z := make([]float64, T*V)
	for r := 0; r < T; r++ {
		for v := 0; v < V; v++ {
			for d := 0; d < D; d++ {
				z[r*V+v] += x[r*D+d] * w[v*D+d]
			}
		}
	}
	ce := &maskedCE{t: T, v: V, labels: labels}
	var want [1]float64
	ce.forward([][]float64{z}, want[:])
	if math.Abs(got[0]-want[0]) > 1e-12*math.Abs(want[0]) {
		t.Fatalf("loss %.15g, unfused %.15g", got[0], want[0])
	}
	gx := make([]float64, T*D)
	fused.backward(0, [][]float64{x}, got[:], []float64{1.5}, gx)
	gz := make([]float64, T*V)
	ce.backward(0, [][]float64{z}, want[:], []float64{1.5}, gz)
	for r := 0; r < T; r++ {
		for d := 0; d < D; d++ {
			var wantG float64
			for v := 0; v < V; v++ {
				wantG += gz[r*V+v] * w[v*D+d]
			}
			if g := gx[r*D+d]; math.Abs(g-wantG) > 1e-12 {
				t.Fatalf("dx[%d,%d] = %.15g, unfused %.15g", r, d, g, wantG)
			}
		}
	}
}
