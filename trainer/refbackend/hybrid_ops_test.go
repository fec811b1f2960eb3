package refbackend

import (
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"
)

// checkKernel compares every input gradient of k with central differences of
// L = Σ out·w for random w.
func checkKernel(t *testing.T, name string, k kernel, shapes []tensor.Shape, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 3))
	in := make([][]float64, len(shapes))
	for i, s := range shapes {
		in[i] = make([]float64, s.TotalSize())
		for j := range in[i] {
			in[i][j] = rng.NormFloat64()
		}
	}
	os, err := k.outShape(shapes)
	if err != nil {
		t.Fatal(err)
	}
	w := make([]float64, os.TotalSize())
	for j := range w {
		w[j] = rng.NormFloat64()
	}
	loss := func() float64 {
		out := make([]float64, len(w))
		k.forward(in, out)
		var l float64
		for j := range out {
			l += out[j] * w[j]
		}
		return l
	}
	out := make([]float64, len(w))
	k.forward(in, out)
	diff := k.diffWRT(len(in))
	for i := range in {
		if !diff[i] {
			continue
		}
		gin := make([]float64, len(in[i]))
		k.backward(i, in, out, w, gin)
		for j := range in[i] {
			old := in[i][j]
			in[i][j] = old + 1e-6
			up := loss()
			in[i][j] = old - 1e-6
			down := loss()
			in[i][j] = old
			if num := (up - down) / 2e-6; math.Abs(gin[j]-num) > 1e-6*(1+math.Abs(num)) {
				t.Errorf("%s: d input %d [%d] = %.10g, numeric %.10g", name, i, j, gin[j], num)
			}
		}
	}
}

func TestHybridOpsFiniteDifferences(t *testing.T) {
	sh := func(d ...int) tensor.Shape { return tensor.Shape(d) }
	w := func(n int, base float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = base + 0.3*math.Sin(float64(3*i+1))
		}
		return out
	}
	state := w(3*6, 0)
	checkKernel(t, "conv", &causalConv{c: 6, k: 4, w: w(24, 0)}, []tensor.Shape{sh(5, 6)}, 1)
	checkKernel(t, "conv+state", &causalConv{c: 6, k: 4, w: w(24, 0), state: state}, []tensor.Shape{sh(5, 6)}, 2)
	checkKernel(t, "l2norm", &l2Norm{width: 4, eps: 1e-6}, []tensor.Shape{sh(3, 8)}, 3)
	checkKernel(t, "gatednorm", &gatedNorm{width: 4, w: w(4, 1), eps: 1e-6}, []tensor.Shape{sh(3, 8), sh(3, 8)}, 4)
	checkKernel(t, "cols", &cols{inW: 12, groups: 2, stride: 6, off: 3, width: 3}, []tensor.Shape{sh(3, 12)}, 5)
	checkKernel(t, "gate", sigmoidGate{}, []tensor.Shape{sh(3, 4), sh(3, 4)}, 6)
	checkKernel(t, "rope", newPartialRope(3, 2, 8, 4, 10000), []tensor.Shape{sh(3, 16)}, 7)
	p := GDN{T: 5, KeyHeads: 1, ValueHeads: 2, KeyDim: 3, ValueDim: 2, Scale: 0.5}
	checkKernel(t, "deltarule", &deltaRule{p: p, aLog: w(2, 0), dtBias: w(2, 1)},
		[]tensor.Shape{sh(5, 3), sh(5, 3), sh(5, 4), sh(5, 2), sh(5, 2)}, 8)
}
