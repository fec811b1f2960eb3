package fast

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestConvSiLUState: the conv continued from convState of a prefix gives the rows a
// single pass over the whole sequence gives, and both match y = silu(Σ w·x) in float64
// with the history written out; a nil state is zero history.
func TestConvSiLUState(t *testing.T) {
	const n, c, k, split = 11, 5, 4, 6
	rng := rand.New(rand.NewPCG(3, 4))
	vec := func(m int) []float32 {
		v := make([]float32, m)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	x, w, hist := vec(n*c), vec(c*k), vec((k-1)*c)
	full := append(append([]float32(nil), hist...), x...) // history rows, then x
	want := func(i, ch int, withHist bool) float64 {
		var s float64
		for j := 0; j < k; j++ {
			r := i - k + 1 + j
			switch {
			case withHist:
				s += float64(w[ch*k+j]) * float64(full[(r+k-1)*c+ch])
			case r >= 0:
				s += float64(w[ch*k+j]) * float64(x[r*c+ch])
			}
		}
		return s / (1 + math.Exp(-s))
	}
	_, whole := convSiLU(x, w, hist, n, c, k)
	_, zero := convSiLU(x, w, nil, n, c, k)
	_, head := convSiLU(x[:split*c], w, hist, split, c, k)
	st := convState(x[:split*c], hist, split, c, k)
	_, tail := convSiLU(x[split*c:], w, st, n-split, c, k)
	parts := append(head, tail...)
	for i := 0; i < n; i++ {
		for ch := 0; ch < c; ch++ {
			at := i*c + ch
			if d := math.Abs(float64(whole[at]) - want(i, ch, true)); d > 1e-5 {
				t.Fatalf("row %d ch %d with history: %v, want %v", i, ch, whole[at], want(i, ch, true))
			}
			if d := math.Abs(float64(zero[at]) - want(i, ch, false)); d > 1e-5 {
				t.Fatalf("row %d ch %d zero history: %v, want %v", i, ch, zero[at], want(i, ch, false))
			}
			if parts[at] != whole[at] {
				t.Fatalf("row %d ch %d: continued from convState %v, one pass %v", i, ch, parts[at], whole[at])
			}
		}
	}
	// A prefix shorter than the history keeps the history's newest rows.
	short := convState(x[:c], hist, 1, c, k)
	for ch := 0; ch < c; ch++ {
		if short[ch] != hist[c+ch] || short[c+ch] != hist[2*c+ch] || short[2*c+ch] != x[ch] {
			t.Fatalf("convState after one row: %v", short)
		}
	}
}
