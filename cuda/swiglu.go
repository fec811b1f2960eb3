package cuda

import "math"

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// SwiGLUForward is the reference for swiglu_fwd: h = silu(gate) · up, elementwise.
func SwiGLUForward(gate, up []float32) []float32 {
	h := make([]float32, len(gate))
	for i := range gate {
		g := float64(gate[i])
		h[i] = float32(g * sigmoid(g) * float64(up[i]))
	}
	return h
}

// SwiGLUBackward is the reference for swiglu_bwd: the gradients of h = silu(g)·u,
// dg = dh·u·σ(g)·(1 + g·(1 − σ(g))) and du = dh·silu(g).
func SwiGLUBackward(dh, gate, up []float32) (dgate, dup []float32) {
	dgate = make([]float32, len(gate))
	dup = make([]float32, len(gate))
	for i := range gate {
		g, u, d := float64(gate[i]), float64(up[i]), float64(dh[i])
		sg := sigmoid(g)
		dgate[i] = float32(d * u * sg * (1 + g*(1-sg)))
		dup[i] = float32(d * g * sg)
	}
	return dgate, dup
}
