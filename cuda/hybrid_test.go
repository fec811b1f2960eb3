package cuda

import (
	"math/rand/v2"
	"testing"
)

// dirGrad is the central difference of Σ dy·f(x) with respect to each x[i].
func dirGrad(x, dy []float32, f func([]float32) []float32) []float32 {
	const h = 1e-3
	g := make([]float32, len(x))
	for i := range x {
		keep := x[i]
		x[i] = keep + h
		up := f(x)
		x[i] = keep - h
		dn := f(x)
		x[i] = keep
		var s float64
		for j := range dy {
			s += float64(dy[j]) * (float64(up[j]) - float64(dn[j]))
		}
		g[i] = float32(s / (2 * h))
	}
	return g
}

func randVec(r *rand.Rand, n int, s float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64() * s)
	}
	return v
}

// TestCausalConvSiLUReference: the conv's backward reference against central differences
// of its forward, with and without a history state; continuing from the last K−1 rows of
// a prefix as the state gives the rows of one pass over the whole input.
func TestCausalConvSiLUReference(t *testing.T) {
	const n, c, k = 9, 3, 4
	r := rand.New(rand.NewPCG(1, 2))
	x, w, st, dy := randVec(r, n*c, 1), randVec(r, c*k, 0.5), randVec(r, (k-1)*c, 1), randVec(r, n*c, 1)
	for _, state := range [][]float32{nil, st} {
		_, pre := CausalConvSiLU(x, w, state, n, c, k)
		got := CausalConvSiLUBackward(dy, pre, w, n, c, k)
		want := dirGrad(x, dy, func(v []float32) []float32 { y, _ := CausalConvSiLU(v, w, state, n, c, k); return y })
		if err := CheckClose("conv dx", got, want, 1e-3); err != nil {
			t.Errorf("state %v: %v", state != nil, err)
		}
	}
	whole, _ := CausalConvSiLU(x, w, st, n, c, k)
	const split = 5
	head, _ := CausalConvSiLU(x[:split*c], w, st, split, c, k)
	tail, _ := CausalConvSiLU(x[split*c:], w, x[(split-k+1)*c:split*c], n-split, c, k)
	if err := CheckClose("conv continued", append(head, tail...), whole, 0); err != nil {
		t.Error(err)
	}
}

// TestGatedRMSNormReference: the gated RMSNorm's backward reference against central
// differences of its forward, for x and for the gate z.
func TestGatedRMSNormReference(t *testing.T) {
	const rows, n, eps = 4, 8, 1e-6
	r := rand.New(rand.NewPCG(3, 4))
	x, z, w, dy := randVec(r, rows*n, 1), randVec(r, rows*n, 1.5), randVec(r, n, 1), randVec(r, rows*n, 1)
	dx, dz := GatedRMSNormBackward(dy, x, z, w, n, eps)
	wantX := dirGrad(x, dy, func(v []float32) []float32 { y, _ := GatedRMSNorm(v, z, w, n, eps); return y })
	wantZ := dirGrad(z, dy, func(v []float32) []float32 { y, _ := GatedRMSNorm(x, v, w, n, eps); return y })
	if err := CheckClose("gated norm dx", dx, wantX, 1e-3); err != nil {
		t.Error(err)
	}
	if err := CheckClose("gated norm dz", dz, wantZ, 1e-3); err != nil {
		t.Error(err)
	}
}
