package fast

import "math"

// rmsNorm is x / sqrt(mean(x²) + eps) · w over each group of len(w) values,
// the sum of squares in float64.
func rmsNorm(x, w []float32, eps float64) []float32 {
	out := make([]float32, len(x))
	n := len(w)
	parallelRows(len(x)/n, func(r0, r1 int) {
		for i := r0; i < r1; i++ {
			row, o := x[i*n:(i+1)*n], out[i*n:(i+1)*n]
			r := rinv(row, eps)
			for j, v := range row {
				o[j] = float32(float64(v)*r) * w[j]
			}
		}
	})
	return out
}

func rinv(x []float32, eps float64) float64 {
	var ss float64
	for _, v := range x {
		ss += float64(v) * float64(v)
	}
	return 1 / math.Sqrt(ss/float64(len(x))+eps)
}

// rmsNormBack returns dx of rmsNorm given the gradient g of its output, added
// into acc when acc is not nil (and then returns acc).
func rmsNormBack(x, w, g []float32, eps float64, acc []float32) []float32 {
	out := acc
	if out == nil {
		out = make([]float32, len(x))
	}
	n := len(w)
	parallelRows(len(x)/n, func(r0, r1 int) {
		for i := r0; i < r1; i++ {
			row, gr, o := x[i*n:(i+1)*n], g[i*n:(i+1)*n], out[i*n:(i+1)*n]
			r := rinv(row, eps)
			var dot float64
			for j, v := range row {
				dot += float64(gr[j]) * float64(w[j]) * float64(v) * r
			}
			dot /= float64(n)
			for j, v := range row {
				o[j] += float32(r * (float64(gr[j])*float64(w[j]) - float64(v)*r*dot))
			}
		}
	})
	return out
}

// rope holds the rotary tables of positions 0..t-1: cos and sin [t, rot/2],
// rotating the first rot dims of each head (rot = hd but for partial rotary).
type rope struct {
	hd, rot  int
	cos, sin []float32
}

func newPartialRope(t, hd, rot int, theta float64) *rope {
	half := rot / 2
	r := &rope{hd: hd, rot: rot, cos: make([]float32, t*half), sin: make([]float32, t*half)}
	for p := 0; p < t; p++ {
		for i := 0; i < half; i++ {
			a := float64(p) / math.Pow(theta, float64(2*i)/float64(rot))
			r.cos[p*half+i], r.sin[p*half+i] = float32(math.Cos(a)), float32(math.Sin(a))
		}
	}
	return r
}

// apply rotates x [t, heads·hd] in place (rotate_half); sign -1 applies the
// inverse rotation, which is the backward pass.
func (k *rope) apply(x []float32, heads int, sign float32) {
	half, hd := k.rot/2, k.hd
	parallelRows(len(x)/(heads*hd), func(r0, r1 int) {
		for p := r0; p < r1; p++ {
			cs, sn := k.cos[p*half:(p+1)*half], k.sin[p*half:(p+1)*half]
			for h := 0; h < heads; h++ {
				v := x[(p*heads+h)*hd : (p*heads+h+1)*hd]
				for i := 0; i < half; i++ {
					c, s := cs[i], sign*sn[i]
					x1, x2 := v[i], v[i+half]
					v[i] = x1*c - x2*s
					v[i+half] = x2*c + x1*s
				}
			}
		}
	})
}

// siluMul is silu(g)·u.
func siluMul(g, u []float32) []float32 {
	out := make([]float32, len(g))
	parallelRows(len(g), func(r0, r1 int) {
		for i := r0; i < r1; i++ {
			out[i] = g[i] * sigmoid(g[i]) * u[i]
		}
	})
	return out
}

// siluMulBack turns da into dg and du, overwriting g's and u's buffers' roles:
// it returns new slices.
func siluMulBack(g, u, da []float32) (dg, du []float32) {
	dg, du = make([]float32, len(g)), make([]float32, len(g))
	parallelRows(len(g), func(r0, r1 int) {
		for i := r0; i < r1; i++ {
			s := sigmoid(g[i])
			du[i] = da[i] * g[i] * s
			dg[i] = da[i] * u[i] * s * (1 + g[i]*(1-s))
		}
	})
	return dg, du
}

func sigmoid(x float32) float32 { return float32(1 / (1 + math.Exp(-float64(x)))) }
