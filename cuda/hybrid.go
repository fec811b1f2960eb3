package cuda

import "math"

// CausalConvSiLU is the reference for causal_conv_silu_fwd: y[t,c] = silu(Σ_j w[c,j]·x[t−K+1+j, c])
// over x [T, C] with w [C, K]; rows before 0 come from state [K−1, C] (oldest first), zeros
// when state is nil. It returns y and the pre-activations, in float64 arithmetic.
func CausalConvSiLU(x, w, state []float32, t, c, k int) (y, pre []float32) {
	y, pre = make([]float32, t*c), make([]float32, t*c)
	for i := 0; i < t; i++ {
		for ch := 0; ch < c; ch++ {
			var s float64
			for j := 0; j < k; j++ {
				r := i - k + 1 + j
				switch {
				case r >= 0:
					s += float64(w[ch*k+j]) * float64(x[r*c+ch])
				case state != nil:
					s += float64(w[ch*k+j]) * float64(state[(k-1+r)*c+ch])
				}
			}
			pre[i*c+ch], y[i*c+ch] = float32(s), float32(s*sigmoid(s))
		}
	}
	return y, pre
}

// CausalConvSiLUBackward is the reference for causal_conv_silu_bwd: dx of CausalConvSiLU
// for dy (the state and the frozen weights get no gradient).
func CausalConvSiLUBackward(dy, pre, w []float32, t, c, k int) []float32 {
	dx := make([]float32, t*c)
	acc := make([]float64, t*c)
	for i := 0; i < t; i++ {
		for ch := 0; ch < c; ch++ {
			p := float64(pre[i*c+ch])
			s := sigmoid(p)
			d := float64(dy[i*c+ch]) * s * (1 + p*(1-s))
			for j := 0; j < k; j++ {
				if r := i - k + 1 + j; r >= 0 {
					acc[r*c+ch] += float64(w[ch*k+j]) * d
				}
			}
		}
	}
	for i, v := range acc {
		dx[i] = float32(v)
	}
	return dx
}

// GatedRMSNorm is the reference for gated_rmsnorm_fwd (Qwen3.5's RMSNormGated): per row of
// n, y = x/√(mean(x²)+eps)·w·silu(z). It returns y and each row's 1/√(mean(x²)+eps).
func GatedRMSNorm(x, z, w []float32, n int, eps float64) (y, rstd []float32) {
	rows := len(x) / n
	y, rstd = make([]float32, len(x)), make([]float32, rows)
	for r := 0; r < rows; r++ {
		var ss float64
		for _, v := range x[r*n : (r+1)*n] {
			ss += float64(v) * float64(v)
		}
		rs := 1 / math.Sqrt(ss/float64(n)+eps)
		rstd[r] = float32(rs)
		for i := 0; i < n; i++ {
			g := float64(z[r*n+i])
			y[r*n+i] = float32(float64(x[r*n+i]) * rs * float64(w[i]) * g * sigmoid(g))
		}
	}
	return y, rstd
}

// GatedRMSNormBackward is the reference for gated_rmsnorm_bwd: the gradients of
// GatedRMSNorm with respect to x and z for dy (w is frozen).
func GatedRMSNormBackward(dy, x, z, w []float32, n int, eps float64) (dx, dz []float32) {
	rows := len(x) / n
	dx, dz = make([]float32, len(x)), make([]float32, len(x))
	for r := 0; r < rows; r++ {
		o := r * n
		var ss float64
		for _, v := range x[o : o+n] {
			ss += float64(v) * float64(v)
		}
		rs := 1 / math.Sqrt(ss/float64(n)+eps)
		var dot float64
		for i := 0; i < n; i++ {
			g, xn, d := float64(z[o+i]), float64(x[o+i])*rs, float64(dy[o+i])
			s := sigmoid(g)
			dot += d * float64(w[i]) * g * s * xn
			dz[o+i] = float32(d * xn * float64(w[i]) * s * (1 + g*(1-s)))
		}
		m := dot / float64(n)
		for i := 0; i < n; i++ {
			g, xn := float64(z[o+i]), float64(x[o+i])*rs
			dx[o+i] = float32(rs * (float64(dy[o+i])*float64(w[i])*g*sigmoid(g) - xn*m))
		}
	}
	return dx, dz
}
