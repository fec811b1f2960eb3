package fast

import "math"

// convSiLU is the depthwise causal conv over x [t, c] with weights w [c, k],
// returning the pre-activation and silu of it. Rows before 0 come from state
// ([k−1, c], oldest first, as the reference backend's causalConv), zeros when
// state is nil; convState gives the state that continues after x.
func convSiLU(x, w, state []float32, t, c, k int) (pre, out []float32) {
	pre, out = make([]float32, t*c), make([]float32, t*c)
	parallelRows(t, func(r0, r1 int) {
		for i := r0; i < r1; i++ {
			for ch := 0; ch < c; ch++ {
				var s float32
				for j := 0; j < k; j++ {
					if r := i - k + 1 + j; r >= 0 {
						s += w[ch*k+j] * x[r*c+ch]
					} else if state != nil {
						s += w[ch*k+j] * state[(k-1+r)*c+ch]
					}
				}
				pre[i*c+ch] = s
				out[i*c+ch] = s * sigmoid(s)
			}
		}
	})
	return pre, out
}

// convSiLUBack returns dx of convSiLU given dout, by output rows gathered
// per input row (no write conflicts between workers).
func convSiLUBack(pre, dout, w []float32, t, c, k int) []float32 {
	dpre := make([]float32, t*c)
	for i, p := range pre {
		s := sigmoid(p)
		dpre[i] = dout[i] * s * (1 + p*(1-s))
	}
	dx := make([]float32, t*c)
	parallelRows(t, func(r0, r1 int) {
		for r := r0; r < r1; r++ {
			for ch := 0; ch < c; ch++ {
				var s float32
				for j := 0; j < k; j++ {
					if i := r + k - 1 - j; i < t {
						s += w[ch*k+j] * dpre[i*c+ch]
					}
				}
				dx[r*c+ch] = s
			}
		}
	})
	return dx
}

// l2Rows normalizes each group of width: x/√(Σx²+1e-6).
func l2Rows(x []float32, width int) []float32 {
	out := make([]float32, len(x))
	for s := 0; s < len(x); s += width {
		r := l2inv(x[s : s+width])
		for j := s; j < s+width; j++ {
			out[j] = float32(float64(x[j]) * r)
		}
	}
	return out
}

func l2inv(x []float32) float64 {
	var ss float64
	for _, v := range x {
		ss += float64(v) * float64(v)
	}
	return 1 / math.Sqrt(ss+1e-6)
}

// l2RowsBack is the backward pass of l2Rows.
func l2RowsBack(x, g []float32, width int) []float32 {
	out := make([]float32, len(x))
	for s := 0; s < len(x); s += width {
		r := l2inv(x[s : s+width])
		var dot float64
		for j := s; j < s+width; j++ {
			dot += float64(g[j]) * float64(x[j]) * r
		}
		for j := s; j < s+width; j++ {
			out[j] = float32(r * (float64(g[j]) - float64(x[j])*r*dot))
		}
	}
	return out
}

// gatedNorm is norm(x)·w·silu(z) over groups of len(w).
func gatedNorm(x, z, w []float32, eps float64) []float32 {
	y := rmsNorm(x, w, eps)
	for i, v := range z {
		y[i] *= v * sigmoid(v)
	}
	return y
}

// gatedNormBack returns dx and dz of gatedNorm.
func gatedNormBack(x, z, w, g []float32, eps float64) (dx, dz []float32) {
	y := rmsNorm(x, w, eps)
	gz := make([]float32, len(g))
	dz = make([]float32, len(g))
	for i, v := range z {
		s := sigmoid(v)
		gz[i] = g[i] * v * s
		dz[i] = g[i] * y[i] * s * (1 + v*(1-s))
	}
	return rmsNormBack(x, w, gz, eps, nil), dz
}

// gdnGates turns in_proj_a and in_proj_b outputs [t, nv] into the log decay
// g = −exp(A_log)·softplus(a + dt_bias) and β = sigmoid(b).
func gdnGates(a, b, aLog, dtBias []float32) (g, beta []float32) {
	nv := len(aLog)
	g, beta = make([]float32, len(a)), make([]float32, len(b))
	for i := range a {
		h := i % nv
		x := float64(a[i] + dtBias[h])
		sp := x
		if x <= 20 {
			sp = math.Log1p(math.Exp(x))
		}
		g[i] = float32(-math.Exp(float64(aLog[h])) * sp)
		beta[i] = sigmoid(b[i])
	}
	return g, beta
}

// cols copies columns [off, off+w) of each of the t rows of x [t, stride]
// (rows may be heads: the query or gate half of a gated q_proj).
func cols(x []float32, t, stride, off, w int) []float32 {
	out := make([]float32, t*w)
	for i := 0; i < t; i++ {
		copy(out[i*w:(i+1)*w], x[i*stride+off:i*stride+off+w])
	}
	return out
}

// uncols adds src [t, w] into columns [off, off+w) of dst [t, stride].
func uncols(dst, src []float32, t, stride, off, w int) {
	for i := 0; i < t; i++ {
		d := dst[i*stride+off : i*stride+off+w]
		for j, v := range src[i*w : (i+1)*w] {
			d[j] += v
		}
	}
}

// convState is the [k−1, c] history after x [t, c] for a conv that started from
// state (nil: zeros): the last k−1 input rows, oldest first.
func convState(x, state []float32, t, c, k int) []float32 {
	out := make([]float32, (k-1)*c)
	for j := 0; j < k-1; j++ {
		switch r := t - (k - 1) + j; {
		case r >= 0:
			copy(out[j*c:(j+1)*c], x[r*c:(r+1)*c])
		case state != nil:
			copy(out[j*c:(j+1)*c], state[(k-1+r)*c:(k+r)*c])
		}
	}
	return out
}
