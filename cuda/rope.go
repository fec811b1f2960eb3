package cuda

import "math"

// RoPEInvFreq returns the rotate_half inverse frequencies for a head of width headDim,
// computed in float32 as Hugging Face does: 1 / theta^(2i/headDim).
func RoPEInvFreq(headDim int, theta float64) []float32 {
	f := make([]float32, headDim/2)
	for i := range f {
		f[i] = float32(1 / math.Pow(theta, float64(2*i)/float64(headDim)))
	}
	return f
}

// QKNormRoPEForward is the reference for qk_norm_rope_fwd in qknorm_rope.cu. x holds
// tokens × heads vectors of width headDim; each is RMS-normalized with weight w (the
// Qwen3 q_norm/k_norm), then rotated by rotate_half RoPE at the token's position.
// It returns the output and the per-vector rstd that the backward pass needs.
func QKNormRoPEForward(x, w []float32, pos []int32, heads, headDim int, eps float32, theta float64) (out, rstd []float32) {
	return qkNormRoPEForward(x, w, pos, heads, headDim, eps, theta, RoundBF16)
}

func qkNormRoPEForward(x, w []float32, pos []int32, heads, headDim int, eps float32, theta float64, round func(float32) float32) (out, rstd []float32) {
	rstd = make([]float32, len(x)/headDim)
	n := make([]float32, len(x))
	for v := range rstd {
		base := v * headDim
		var ss float64
		for i := 0; i < headDim; i++ {
			ss += float64(x[base+i]) * float64(x[base+i])
		}
		rs := float32(1 / math.Sqrt(ss/float64(headDim)+float64(eps)))
		rstd[v] = rs
		for i := 0; i < headDim; i++ {
			n[base+i] = round(x[base+i]*rs) * w[i]
		}
	}
	return rotate(n, pos, heads, headDim, theta, 1), rstd
}

// QKNormRoPEBackward is the reference for qk_norm_rope_bwd: the rotation is undone
// (rotation by −angle is the transpose) and the result is passed back through the RMSNorm.
func QKNormRoPEBackward(dout, x, rstd, w []float32, pos []int32, heads, headDim int, theta float64) []float32 {
	return RMSNormBackward(rotate(dout, pos, heads, headDim, theta, -1), x, rstd, w, nil, headDim)
}

// RoPEForward is the reference for rope_fwd: plain rotate_half RoPE of x [T, heads,
// headDim] at the tokens' positions, without a norm (Qwen2).
func RoPEForward(x []float32, pos []int32, heads, headDim int, theta float64) []float32 {
	return rotate(x, pos, heads, headDim, theta, 1)
}

// RoPEBackward is the reference for rope_bwd: the rotation by −angle, which is the
// transpose of the forward rotation.
func RoPEBackward(dout []float32, pos []int32, heads, headDim int, theta float64) []float32 {
	return rotate(dout, pos, heads, headDim, theta, -1)
}

// rotate turns each pair (i, i+headDim/2) of every vector of x [T, heads, headDim] by
// sign times the angle of its token's position.
func rotate(x []float32, pos []int32, heads, headDim int, theta float64, sign float64) []float32 {
	inv := RoPEInvFreq(headDim, theta)
	half := headDim / 2
	out := make([]float32, len(x))
	for t := range pos {
		for hh := 0; hh < heads; hh++ {
			base := (t*heads + hh) * headDim
			for i := 0; i < half; i++ {
				a := float64(float32(pos[t]) * inv[i])
				c, s := math.Cos(a), sign*math.Sin(a)
				x1, x2 := float64(x[base+i]), float64(x[base+i+half])
				out[base+i] = float32(x1*c - x2*s)
				out[base+i+half] = float32(x2*c + x1*s)
			}
		}
	}
	return out
}
