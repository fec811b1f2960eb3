package cuda

import "math"

// QKNormPartialRoPE is the reference for qk_norm_prope_fwd: each of the nvec = T·heads
// vectors of x (vector v at v·xstride, hd wide) is RMS-normalized with w (already 1 + w for
// the hybrid), rounded to bf16 before the weight as the kernel does, and its first rot dims
// rotated by rotate_half RoPE with frequencies theta^(−2j/rot). Output [nvec, hd].
func QKNormPartialRoPE(x, w []float32, pos []int32, heads, hd, rot, xstride int, eps float32, theta float64) (out, rstd []float32) {
	return qkNormPartialRoPE(x, w, pos, heads, hd, rot, xstride, eps, theta, RoundBF16)
}

func qkNormPartialRoPE(x, w []float32, pos []int32, heads, hd, rot, xstride int, eps float32, theta float64, round func(float32) float32) (out, rstd []float32) {
	nvec := len(pos) * heads
	out, rstd = make([]float32, nvec*hd), make([]float32, nvec)
	n := make([]float32, hd)
	half := rot / 2
	for v := 0; v < nvec; v++ {
		xs := x[v*xstride : v*xstride+hd]
		var ss float64
		for _, e := range xs {
			ss += float64(e) * float64(e)
		}
		rs := float32(1 / math.Sqrt(ss/float64(hd)+float64(eps)))
		rstd[v] = rs
		for i := range n {
			n[i] = round(xs[i]*rs) * w[i]
		}
		o := out[v*hd : (v+1)*hd]
		copy(o, n)
		for j := 0; j < half; j++ {
			a := float64(float32(pos[v/heads]) * float32(1/math.Pow(theta, float64(2*j)/float64(rot))))
			c, s := math.Cos(a), math.Sin(a)
			x1, x2 := float64(n[j]), float64(n[j+half])
			o[j], o[j+half] = float32(x1*c-x2*s), float32(x2*c+x1*s)
		}
	}
	return out, rstd
}

// QKNormPartialRoPEBackward is the reference for qk_norm_prope_bwd: dx (x's strided layout,
// other columns untouched) for dout [nvec, hd], treating the bf16 rounding as identity.
func QKNormPartialRoPEBackward(dx, dout, x, rstd, w []float32, pos []int32, heads, hd, rot, xstride int, theta float64) {
	half := rot / 2
	g := make([]float64, hd)
	for v := range rstd {
		d := dout[v*hd : (v+1)*hd]
		for i := range g {
			g[i] = float64(d[i])
		}
		for j := 0; j < half; j++ {
			a := float64(float32(pos[v/heads]) * float32(1/math.Pow(theta, float64(2*j)/float64(rot))))
			c, s := math.Cos(a), math.Sin(a)
			g[j], g[j+half] = float64(d[j])*c+float64(d[j+half])*s, float64(d[j+half])*c-float64(d[j])*s
		}
		rs := float64(rstd[v])
		xs := x[v*xstride : v*xstride+hd]
		var dot float64
		for i := range g {
			g[i] *= float64(w[i])
			dot += g[i] * float64(xs[i]) * rs
		}
		m := dot / float64(hd)
		for i := range g {
			dx[v*xstride+i] = float32(rs * (g[i] - float64(xs[i])*rs*m))
		}
	}
}
