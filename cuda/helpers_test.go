package cuda

import (
	"math/rand/v2"
	"testing"
)

func randSlice(rng *rand.Rand, n int, scale float32) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(rng.NormFloat64()) * scale
	}
	return out
}

func identity(f float32) float32 { return f }

// dot returns Σ a·b in float64: the scalar loss L = Σ dy·y whose gradient the backward
// passes compute for upstream gradient dy.
func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// numGrad returns the central finite-difference gradient of f with respect to x.
func numGrad(x []float32, h float32, f func() float64) []float32 {
	g := make([]float32, len(x))
	for i := range x {
		old := x[i]
		x[i] = old + h
		up := f()
		x[i] = old - h
		down := f()
		x[i] = old
		g[i] = float32((up - down) / float64(2*h))
	}
	return g
}

func checkGrad(t *testing.T, name string, got, want []float32, tol float64) {
	t.Helper()
	if e := RelErr(got, want); e > tol {
		t.Errorf("%s: relative error %.3g against finite differences, want ≤ %.1g", name, e, tol)
	}
}
