package cuda

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestEmbeddingForward(t *testing.T) {
	table := []float32{0, 1, 10, 11, 20, 21}
	got, err := EmbeddingForward(table, 3, 2, []int32{2, 0, 2})
	if err != nil {
		t.Fatal(err)
	}
	want := []float32{20, 21, 0, 1, 20, 21}
	if RelErr(got, want) != 0 {
		t.Errorf("got %v, want %v", got, want)
	}
	for _, ids := range [][]int32{{3}, {-1}} {
		if _, err := EmbeddingForward(table, 3, 2, ids); err == nil {
			t.Errorf("ids %v: no error", ids)
		}
	}
	if _, err := EmbeddingForward(table[:5], 3, 2, nil); err == nil {
		t.Error("short table: no error")
	}
}

func TestRMSNormForward(t *testing.T) {
	// h = (3, 4): mean square 12.5, rstd = 1/sqrt(12.5).
	y, h, rstd := RMSNormForward([]float32{1, 4}, []float32{2, 0}, []float32{1, 2}, 2, 0)
	r := 1 / math.Sqrt(12.5)
	if got, want := float64(rstd[0]), r; math.Abs(got-want) > 1e-6 {
		t.Errorf("rstd = %v, want %v", got, want)
	}
	if got, want := h, []float32{3, 4}; RelErr(got, want) != 0 {
		t.Errorf("h = %v, want %v", got, want)
	}
	want := []float32{RoundBF16(float32(3 * r)), 2 * RoundBF16(float32(4*r))}
	if RelErr(y, want) > 1e-7 {
		t.Errorf("y = %v, want %v", y, want)
	}
}

func TestRMSNormBackward(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const rows, dim = 3, 16
	x, res := randSlice(rng, rows*dim, 1), randSlice(rng, rows*dim, 1)
	w, dy, dres := randSlice(rng, dim, 1), randSlice(rng, rows*dim, 1), randSlice(rng, rows*dim, 1)
	_, h, rstd := rmsNormForward(x, res, w, dim, 1e-6, identity)
	got := RMSNormBackward(dy, h, rstd, w, dres, dim)
	// d/dx of Σ dy·y + Σ dres·h, where h = x + res.
	want := numGrad(x, 1e-2, func() float64 {
		y, h, _ := rmsNormForward(x, res, w, dim, 1e-6, identity)
		return dot(dy, y) + dot(dres, h)
	})
	checkGrad(t, "dh", got, want, 1e-3)
}

func TestQKNormRoPE(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const heads, hd = 2, 8
	pos := []int32{0, 5, 17}
	x := randSlice(rng, len(pos)*heads*hd, 1)
	w := randSlice(rng, hd, 1)
	out, rstd := qkNormRoPEForward(x, w, pos, heads, hd, 1e-6, 10000, identity)
	// Position 0 is the identity rotation, and a rotation keeps each vector's norm.
	normed, _, _ := rmsNormForward(x, nil, w, hd, 1e-6, identity)
	if e := RelErr(out[:heads*hd], normed[:heads*hd]); e > 1e-6 {
		t.Errorf("position 0 differs from plain RMSNorm by %v", e)
	}
	for v := 0; v < len(pos)*heads; v++ {
		a, b := out[v*hd:(v+1)*hd], normed[v*hd:(v+1)*hd]
		if got, want := dot(a, a), dot(b, b); math.Abs(got-want) > 1e-4*want {
			t.Errorf("vector %d: squared norm %v, want %v", v, got, want)
		}
	}
	dout := randSlice(rng, len(out), 1)
	got := QKNormRoPEBackward(dout, x, rstd, w, pos, heads, hd, 10000)
	want := numGrad(x, 1e-2, func() float64 {
		o, _ := qkNormRoPEForward(x, w, pos, heads, hd, 1e-6, 10000, identity)
		return dot(dout, o)
	})
	checkGrad(t, "dx", got, want, 1e-3)
}

func TestRoPE(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const heads, hd = 2, 8
	pos := []int32{0, 5, 17}
	x := randSlice(rng, len(pos)*heads*hd, 1)
	out := RoPEForward(x, pos, heads, hd, 10000)
	// Position 0 is the identity rotation, and a rotation keeps each vector's norm.
	if e := RelErr(out[:heads*hd], x[:heads*hd]); e > 1e-7 {
		t.Errorf("position 0 changes the vector by %v", e)
	}
	for v := 0; v < len(pos)*heads; v++ {
		a, b := out[v*hd:(v+1)*hd], x[v*hd:(v+1)*hd]
		if got, want := dot(a, a), dot(b, b); math.Abs(got-want) > 1e-4*want {
			t.Errorf("vector %d: squared norm %v, want %v", v, got, want)
		}
	}
	// Without the norm, RoPE is QKNormRoPE's rotation alone.
	w := make([]float32, hd)
	for i := range w {
		w[i] = 1
	}
	normed, rstd := qkNormRoPEForward(x, w, pos, heads, hd, 0, 10000, identity)
	for v, rs := range rstd {
		for i := 0; i < hd; i++ {
			normed[v*hd+i] /= rs
		}
	}
	if e := RelErr(out, normed); e > 1e-6 {
		t.Errorf("RoPEForward differs from QKNormRoPE's rotation by %v", e)
	}
	dout := randSlice(rng, len(out), 1)
	got := RoPEBackward(dout, pos, heads, hd, 10000)
	want := numGrad(x, 1e-2, func() float64 { return dot(dout, RoPEForward(x, pos, heads, hd, 10000)) })
	checkGrad(t, "dx", got, want, 1e-3)
}

func TestBiasRows(t *testing.T) {
	if got, want := BiasRows([]float32{1, 2, 3}, 2), []float32{1, 2, 3, 1, 2, 3}; RelErr(got, want) != 0 {
		t.Errorf("BiasRows = %v, want %v", got, want)
	}
}

func TestSwiGLU(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	g, u, dh := randSlice(rng, 64, 2), randSlice(rng, 64, 1), randSlice(rng, 64, 1)
	h := SwiGLUForward([]float32{0, 1}, []float32{3, 2})
	if want := []float32{0, float32(2 / (1 + math.Exp(-1)))}; RelErr(h, want) > 1e-7 {
		t.Errorf("forward = %v, want %v", h, want)
	}
	dg, du := SwiGLUBackward(dh, g, u)
	checkGrad(t, "dgate", dg, numGrad(g, 1e-2, func() float64 { return dot(dh, SwiGLUForward(g, u)) }), 1e-3)
	checkGrad(t, "dup", du, numGrad(u, 1e-2, func() float64 { return dot(dh, SwiGLUForward(g, u)) }), 1e-3)
}
