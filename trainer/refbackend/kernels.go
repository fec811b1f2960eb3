package refbackend

import (
	"fmt"
	"math"

	"gorgonia.org/tensor"
)

func sameShape(in []tensor.Shape) (tensor.Shape, error) { return in[0].Clone(), nil }

func firstOnly(n int) []bool {
	d := make([]bool, n)
	d[0] = true
	return d
}

func allDiff(n int) []bool {
	d := make([]bool, n)
	for i := range d {
		d[i] = true
	}
	return d
}

// rmsNorm normalizes each group of width values: x / sqrt(mean(x²) + eps) * w.
// With float64 compute the Hugging Face fp32-then-cast order is exact.
type rmsNorm struct {
	width int
	w     []float64
	eps   float64
}

func (k *rmsNorm) name() string                                     { return "RMSNorm" }
func (k *rmsNorm) outShape(in []tensor.Shape) (tensor.Shape, error) { return sameShape(in) }
func (k *rmsNorm) diffWRT(n int) []bool                             { return firstOnly(n) }

func (k *rmsNorm) rinv(x []float64) float64 {
	var ss float64
	for _, v := range x {
		ss += v * v
	}
	return 1 / math.Sqrt(ss/float64(len(x))+k.eps)
}

func (k *rmsNorm) forward(in [][]float64, out []float64) {
	x := in[0]
	for s := 0; s < len(x); s += k.width {
		r := k.rinv(x[s : s+k.width])
		for j := 0; j < k.width; j++ {
			out[s+j] = x[s+j] * r * k.w[j]
		}
	}
}

func (k *rmsNorm) backward(_ int, in [][]float64, _, g, gin []float64) {
	x := in[0]
	n := float64(k.width)
	for s := 0; s < len(x); s += k.width {
		r := k.rinv(x[s : s+k.width])
		var dot float64
		for j := 0; j < k.width; j++ {
			dot += g[s+j] * k.w[j] * x[s+j] * r
		}
		for j := 0; j < k.width; j++ {
			xh := x[s+j] * r
			gin[s+j] = r * (g[s+j]*k.w[j] - xh*dot/n)
		}
	}
}

// rope applies rotate_half rotary embeddings to [T, heads*hd] at positions
// 0..T-1, on the first rot dims of each head (partial rotary; rot = hd for
// the dense families); the other dims pass through.
type rope struct {
	t, heads, hd, rot int
	cos, sin          []float64 // [T, rot/2]
}

func newPartialRope(t, heads, hd, rot int, theta float64) *rope {
	half := rot / 2
	r := &rope{t: t, heads: heads, hd: hd, rot: rot, cos: make([]float64, t*half), sin: make([]float64, t*half)}
	for p := 0; p < t; p++ {
		for i := 0; i < half; i++ {
			inv := 1 / math.Pow(theta, float64(2*i)/float64(rot))
			a := float64(p) * inv
			r.cos[p*half+i], r.sin[p*half+i] = math.Cos(a), math.Sin(a)
		}
	}
	return r
}

func (k *rope) name() string                                     { return "RoPE" }
func (k *rope) outShape(in []tensor.Shape) (tensor.Shape, error) { return sameShape(in) }
func (k *rope) diffWRT(n int) []bool                             { return firstOnly(n) }

func (k *rope) apply(x, out []float64, sign float64) {
	half := k.rot / 2
	for p := 0; p < k.t; p++ {
		for h := 0; h < k.heads; h++ {
			base := (p*k.heads + h) * k.hd
			copy(out[base+k.rot:base+k.hd], x[base+k.rot:base+k.hd])
			for i := 0; i < half; i++ {
				c, s := k.cos[p*half+i], sign*k.sin[p*half+i]
				x1, x2 := x[base+i], x[base+i+half]
				out[base+i] = x1*c - x2*s
				out[base+i+half] = x2*c + x1*s
			}
		}
	}
}

func (k *rope) forward(in [][]float64, out []float64) { k.apply(in[0], out, 1) }

// backward applies the transposed rotation, which is the rotation by -angle.
func (k *rope) backward(_ int, _ [][]float64, _, g, gin []float64) { k.apply(g, gin, -1) }

// attention is causal grouped-query attention: q [T, nh*hd], k and v
// [T, nkv*hd]; query head h reads key/value head h / (nh/nkv).
type attention struct {
	t, nh, nkv, hd int
	scale          float64
}

func (k *attention) name() string { return "CausalGQA" }
func (k *attention) outShape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in) != 3 || in[0].TotalSize() != k.t*k.nh*k.hd || in[1].TotalSize() != k.t*k.nkv*k.hd || in[2].TotalSize() != k.t*k.nkv*k.hd {
		return nil, fmt.Errorf("attention: shapes %v do not match T=%d heads=%d/%d hd=%d", in, k.t, k.nh, k.nkv, k.hd)
	}
	return in[0].Clone(), nil
}
func (k *attention) diffWRT(n int) []bool { return allDiff(n) }

// probs returns softmax rows p[t][0..t] for head h.
func (k *attention) probs(q, kk []float64, h int) [][]float64 {
	g := h / (k.nh / k.nkv)
	p := make([][]float64, k.t)
	for t := 0; t < k.t; t++ {
		row := make([]float64, t+1)
		qo := (t*k.nh + h) * k.hd
		mx := math.Inf(-1)
		for j := 0; j <= t; j++ {
			ko := (j*k.nkv + g) * k.hd
			var s float64
			for d := 0; d < k.hd; d++ {
				s += q[qo+d] * kk[ko+d]
			}
			row[j] = s * k.scale
			mx = math.Max(mx, row[j])
		}
		var z float64
		for j := range row {
			row[j] = math.Exp(row[j] - mx)
			z += row[j]
		}
		for j := range row {
			row[j] /= z
		}
		p[t] = row
	}
	return p
}

func (k *attention) forward(in [][]float64, out []float64) {
	q, kk, v := in[0], in[1], in[2]
	for h := 0; h < k.nh; h++ {
		g := h / (k.nh / k.nkv)
		p := k.probs(q, kk, h)
		for t := 0; t < k.t; t++ {
			oo := (t*k.nh + h) * k.hd
			for j, pj := range p[t] {
				vo := (j*k.nkv + g) * k.hd
				for d := 0; d < k.hd; d++ {
					out[oo+d] += pj * v[vo+d]
				}
			}
		}
	}
}

func (k *attention) backward(i int, in [][]float64, _, gout, gin []float64) {
	q, kk, v := in[0], in[1], in[2]
	for h := 0; h < k.nh; h++ {
		g := h / (k.nh / k.nkv)
		p := k.probs(q, kk, h)
		for t := 0; t < k.t; t++ {
			oo := (t*k.nh + h) * k.hd
			if i == 2 {
				for j, pj := range p[t] {
					vo := (j*k.nkv + g) * k.hd
					for d := 0; d < k.hd; d++ {
						gin[vo+d] += pj * gout[oo+d]
					}
				}
				continue
			}
			dp := make([]float64, t+1)
			var sum float64
			for j := range dp {
				vo := (j*k.nkv + g) * k.hd
				for d := 0; d < k.hd; d++ {
					dp[j] += gout[oo+d] * v[vo+d]
				}
				sum += p[t][j] * dp[j]
			}
			for j := range dp {
				ds := p[t][j] * (dp[j] - sum) * k.scale
				ko := (j*k.nkv + g) * k.hd
				for d := 0; d < k.hd; d++ {
					if i == 0 {
						gin[oo+d] += ds * kk[ko+d]
					} else {
						gin[ko+d] += ds * q[oo+d]
					}
				}
			}
		}
	}
}

// siluMul is the SwiGLU gate: silu(gate) * up.
type siluMul struct{}

func (siluMul) name() string                                     { return "SiLUMul" }
func (siluMul) outShape(in []tensor.Shape) (tensor.Shape, error) { return sameShape(in) }
func (siluMul) diffWRT(n int) []bool                             { return allDiff(n) }

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

func (siluMul) forward(in [][]float64, out []float64) {
	for j, g := range in[0] {
		out[j] = g * sigmoid(g) * in[1][j]
	}
}

func (siluMul) backward(i int, in [][]float64, _, gout, gin []float64) {
	for j, g := range in[0] {
		s := sigmoid(g)
		if i == 0 {
			gin[j] = gout[j] * in[1][j] * s * (1 + g*(1-s))
		} else {
			gin[j] = gout[j] * g * s
		}
	}
}

// maskedCE is the mean over supervised positions of -log softmax(logits[t])
// at labels[t+1] (Hugging Face alignment); 0 when nothing is supervised.
type maskedCE struct {
	t, v   int
	labels []int32
}

func (k *maskedCE) name() string { return "MaskedCE" }
func (k *maskedCE) outShape(in []tensor.Shape) (tensor.Shape, error) {
	if in[0].TotalSize() != k.t*k.v {
		return nil, fmt.Errorf("masked CE: logits %v, want [%d %d]", in[0], k.t, k.v)
	}
	return tensor.ScalarShape(), nil
}
func (k *maskedCE) diffWRT(n int) []bool { return firstOnly(n) }

// count is the number of supervised positions.
func (k *maskedCE) count() int {
	n := 0
	for t := 0; t+1 < k.t; t++ {
		if k.labels[t+1] >= 0 {
			n++
		}
	}
	return n
}

func (k *maskedCE) logZ(z []float64) float64 {
	mx := math.Inf(-1)
	for _, x := range z {
		mx = math.Max(mx, x)
	}
	var s float64
	for _, x := range z {
		s += math.Exp(x - mx)
	}
	return mx + math.Log(s)
}

func (k *maskedCE) forward(in [][]float64, out []float64) {
	n := k.count()
	if n == 0 {
		return
	}
	var sum float64
	for t := 0; t+1 < k.t; t++ {
		y := k.labels[t+1]
		if y < 0 {
			continue
		}
		z := in[0][t*k.v : (t+1)*k.v]
		sum += k.logZ(z) - z[y]
	}
	out[0] = sum / float64(n)
}

func (k *maskedCE) backward(_ int, in [][]float64, _, gout, gin []float64) {
	n := k.count()
	if n == 0 {
		return
	}
	c := gout[0] / float64(n)
	for t := 0; t+1 < k.t; t++ {
		y := k.labels[t+1]
		if y < 0 {
			continue
		}
		z := in[0][t*k.v : (t+1)*k.v]
		lz := k.logZ(z)
		g := gin[t*k.v : (t+1)*k.v]
		for j, x := range z {
			g[j] = c * math.Exp(x-lz)
		}
		g[y] -= c
	}
}

// scaleMul multiplies elementwise by a frozen vector (dropout mask already
// divided by the keep probability) or, when mask is nil, by a constant.
type scaleMul struct {
	c    float64
	mask []float64
}

func (k *scaleMul) name() string                                     { return "Scale" }
func (k *scaleMul) outShape(in []tensor.Shape) (tensor.Shape, error) { return sameShape(in) }
func (k *scaleMul) diffWRT(n int) []bool                             { return firstOnly(n) }
func (k *scaleMul) forward(in [][]float64, out []float64)            { k.backward(0, nil, nil, in[0], out) }
func (k *scaleMul) backward(_ int, _ [][]float64, _, g, gin []float64) {
	for j, x := range g {
		m := k.c
		if k.mask != nil {
			m *= k.mask[j]
		}
		gin[j] = x * m
	}
}

// addBias adds a frozen bias to every row.
type addBias struct{ b []float64 }

func (k *addBias) name() string                                     { return "AddBias" }
func (k *addBias) outShape(in []tensor.Shape) (tensor.Shape, error) { return sameShape(in) }
func (k *addBias) diffWRT(n int) []bool                             { return firstOnly(n) }
func (k *addBias) forward(in [][]float64, out []float64) {
	for j, x := range in[0] {
		out[j] = x + k.b[j%len(k.b)]
	}
}
func (k *addBias) backward(_ int, _ [][]float64, _, g, gin []float64) { copy(gin, g) }
