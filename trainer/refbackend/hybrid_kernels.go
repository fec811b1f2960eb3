package refbackend

import (
	"fmt"
	"math"

	"gorgonia.org/tensor"
)

func silu(x float64) float64 { return x * sigmoid(x) }

// dsilu is d silu(x)/dx.
func dsilu(x float64) float64 { s := sigmoid(x); return s * (1 + x*(1-s)) }

func softplus(x float64) float64 {
	if x > 20 {
		return x
	}
	return math.Log1p(math.Exp(x))
}

// causalConv is Gated DeltaNet's depthwise causal conv followed by SiLU on
// [T, C]: y[t,c] = silu(Σ_j w[c,j]·x[t−K+1+j, c]), where rows before 0 come
// from state ([K−1, C], oldest first; zeros when nil).
type causalConv struct {
	c, k  int
	w     []float64 // [C, K] (conv1d.weight [C, 1, K])
	state []float64
}

func (k *causalConv) name() string                                     { return "CausalConvSiLU" }
func (k *causalConv) outShape(in []tensor.Shape) (tensor.Shape, error) { return sameShape(in) }
func (k *causalConv) diffWRT(n int) []bool                             { return firstOnly(n) }

// at is the input at row r (negative rows from the state).
func (k *causalConv) at(x []float64, r, ch int) float64 {
	if r >= 0 {
		return x[r*k.c+ch]
	}
	if k.state == nil {
		return 0
	}
	return k.state[(k.k-1+r)*k.c+ch]
}

func (k *causalConv) pre(x []float64, t, ch int) float64 {
	var s float64
	for j := 0; j < k.k; j++ {
		s += k.w[ch*k.k+j] * k.at(x, t-k.k+1+j, ch)
	}
	return s
}

func (k *causalConv) forward(in [][]float64, out []float64) {
	x := in[0]
	for t := 0; t < len(x)/k.c; t++ {
		for ch := 0; ch < k.c; ch++ {
			out[t*k.c+ch] = silu(k.pre(x, t, ch))
		}
	}
}

func (k *causalConv) backward(_ int, in [][]float64, _, g, gin []float64) {
	x := in[0]
	for t := 0; t < len(x)/k.c; t++ {
		for ch := 0; ch < k.c; ch++ {
			d := g[t*k.c+ch] * dsilu(k.pre(x, t, ch))
			for j := 0; j < k.k; j++ {
				if r := t - k.k + 1 + j; r >= 0 {
					gin[r*k.c+ch] += k.w[ch*k.k+j] * d
				}
			}
		}
	}
}

// l2Norm is FLA's q/k normalization per group of width: x / √(Σx² + eps).
type l2Norm struct {
	width int
	eps   float64
}

func (k *l2Norm) name() string                                     { return "L2Norm" }
func (k *l2Norm) outShape(in []tensor.Shape) (tensor.Shape, error) { return sameShape(in) }
func (k *l2Norm) diffWRT(n int) []bool                             { return firstOnly(n) }

func (k *l2Norm) rinv(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v * v
	}
	return 1 / math.Sqrt(s+k.eps)
}

func (k *l2Norm) forward(in [][]float64, out []float64) {
	x := in[0]
	for s := 0; s < len(x); s += k.width {
		r := k.rinv(x[s : s+k.width])
		for j := s; j < s+k.width; j++ {
			out[j] = x[j] * r
		}
	}
}

func (k *l2Norm) backward(_ int, in [][]float64, _, g, gin []float64) {
	x := in[0]
	for s := 0; s < len(x); s += k.width {
		r := k.rinv(x[s : s+k.width])
		var dot float64
		for j := s; j < s+k.width; j++ {
			dot += g[j] * x[j] * r
		}
		for j := s; j < s+k.width; j++ {
			gin[j] = r * (g[j] - x[j]*r*dot)
		}
	}
}

// gatedNorm is Qwen3.5's gated RMSNorm per group of width: x/rms(x)·w·silu(z);
// inputs x and z.
type gatedNorm struct {
	width int
	w     []float64
	eps   float64
}

func (k *gatedNorm) name() string                                     { return "GatedRMSNorm" }
func (k *gatedNorm) outShape(in []tensor.Shape) (tensor.Shape, error) { return sameShape(in) }
func (k *gatedNorm) diffWRT(n int) []bool                             { return allDiff(n) }

func (k *gatedNorm) forward(in [][]float64, out []float64) {
	n := rmsNorm{width: k.width, w: k.w, eps: k.eps}
	n.forward(in[:1], out)
	for j, z := range in[1] {
		out[j] *= silu(z)
	}
}

func (k *gatedNorm) backward(i int, in [][]float64, _, g, gin []float64) {
	x, z := in[0], in[1]
	n := rmsNorm{width: k.width, w: k.w, eps: k.eps}
	if i == 0 {
		gz := make([]float64, len(g))
		for j := range g {
			gz[j] = g[j] * silu(z[j])
		}
		n.backward(0, in[:1], nil, gz, gin)
		return
	}
	y := make([]float64, len(x))
	n.forward(in[:1], y)
	for j := range g {
		gin[j] = g[j] * y[j] * dsilu(z[j])
	}
}

// cols selects, from each row of width inW, groups blocks of width columns
// starting at off, stride apart: the query or gate half of a gated q_proj
// (groups = heads) or one of q, k, v of the conv output (groups = 1).
type cols struct {
	inW, groups, stride, off, width int
}

func (k *cols) name() string { return "Cols" }
func (k *cols) outShape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in[0]) != 2 || in[0][1] != k.inW {
		return nil, fmt.Errorf("cols: input %v, want width %d", in[0], k.inW)
	}
	return tensor.Shape{in[0][0], k.groups * k.width}, nil
}
func (k *cols) diffWRT(n int) []bool { return firstOnly(n) }

func (k *cols) each(rows int, f func(src, dst int)) {
	ow := k.groups * k.width
	for r := 0; r < rows; r++ {
		for g := 0; g < k.groups; g++ {
			for j := 0; j < k.width; j++ {
				f(r*k.inW+g*k.stride+k.off+j, r*ow+g*k.width+j)
			}
		}
	}
}

func (k *cols) forward(in [][]float64, out []float64) {
	k.each(len(in[0])/k.inW, func(s, d int) { out[d] = in[0][s] })
}

func (k *cols) backward(_ int, in [][]float64, _, g, gin []float64) {
	k.each(len(in[0])/k.inW, func(s, d int) { gin[s] = g[d] })
}

// sigmoidGate is the attention output gate: a · sigmoid(gate).
type sigmoidGate struct{}

func (sigmoidGate) name() string                                     { return "SigmoidGate" }
func (sigmoidGate) outShape(in []tensor.Shape) (tensor.Shape, error) { return sameShape(in) }
func (sigmoidGate) diffWRT(n int) []bool                             { return allDiff(n) }
func (sigmoidGate) forward(in [][]float64, out []float64) {
	for j, a := range in[0] {
		out[j] = a * sigmoid(in[1][j])
	}
}
func (sigmoidGate) backward(i int, in [][]float64, _, g, gin []float64) {
	for j, a := range in[0] {
		s := sigmoid(in[1][j])
		if i == 0 {
			gin[j] = g[j] * s
		} else {
			gin[j] = g[j] * a * s * (1 - s)
		}
	}
}

// deltaRule is the gated delta rule op: inputs q, k (L2-normalized), v and the
// raw a, b projections; g = −exp(A_log)·softplus(a + dt_bias), β = sigmoid(b).
// The backward pass runs once and serves all five inputs.
type deltaRule struct {
	p            GDN
	aLog, dtBias []float64
	grads        *GDNGrads
}

func (k *deltaRule) name() string                                     { return "GatedDeltaRule" }
func (k *deltaRule) outShape(in []tensor.Shape) (tensor.Shape, error) { return in[2].Clone(), nil }
func (k *deltaRule) diffWRT(n int) []bool                             { return allDiff(n) }

func (k *deltaRule) gates(a, b []float64) (g, beta []float64) {
	nv := k.p.ValueHeads
	g, beta = make([]float64, len(a)), make([]float64, len(b))
	for i := range a {
		h := i % nv
		g[i] = -math.Exp(k.aLog[h]) * softplus(a[i]+k.dtBias[h])
		beta[i] = sigmoid(b[i])
	}
	return g, beta
}

func (k *deltaRule) forward(in [][]float64, out []float64) {
	g, beta := k.gates(in[3], in[4])
	o, _ := k.p.Forward(in[0], in[1], in[2], g, beta, nil)
	copy(out, o)
}

func (k *deltaRule) backward(i int, in [][]float64, _, gout, gin []float64) {
	if k.grads == nil {
		g, beta := k.gates(in[3], in[4])
		r := k.p.Backward(in[0], in[1], in[2], g, beta, nil, gout, nil)
		nv := k.p.ValueHeads
		for j, a := range in[3] {
			h := j % nv
			r.G[j] *= -math.Exp(k.aLog[h]) * sigmoid(a+k.dtBias[h])
			r.Beta[j] *= beta[j] * (1 - beta[j])
		}
		k.grads = &r
	}
	copy(gin, [][]float64{k.grads.Q, k.grads.K, k.grads.V, k.grads.G, k.grads.Beta}[i])
}
