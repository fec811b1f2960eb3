package refbackend

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mass-dev/mass/trainer"
	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/model"
)

// randGDN draws normalized q, k and moderate v, decays and β for p.
func randGDN(p GDN, seed uint64) (q, k, v, g, beta, s0 []float64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	vec := func(n int, f func() float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = f()
		}
		return out
	}
	normed := func() []float64 {
		x := vec(p.T*p.KeyHeads*p.KeyDim, rng.NormFloat64)
		for s := 0; s < len(x); s += p.KeyDim {
			var n float64
			for _, y := range x[s : s+p.KeyDim] {
				n += y * y
			}
			for i := s; i < s+p.KeyDim; i++ {
				x[i] /= math.Sqrt(n)
			}
		}
		return x
	}
	q, k = normed(), normed()
	v = vec(p.T*p.ValueHeads*p.ValueDim, rng.NormFloat64)
	g = vec(p.T*p.ValueHeads, func() float64 { return -0.5 * rng.Float64() })
	beta = vec(p.T*p.ValueHeads, rng.Float64)
	s0 = vec(p.ValueHeads*p.KeyDim*p.ValueDim, func() float64 { return 0.3 * rng.NormFloat64() })
	return
}

// TestGDNBackwardFiniteDifferences holds the recurrent gated delta rule's
// backward pass (q, k, v, g, β and the initial state) to central differences
// of L = Σ o·W + Σ S_T·U, with grouped key heads and an initial state.
func TestGDNBackwardFiniteDifferences(t *testing.T) {
	p := GDN{T: 7, KeyHeads: 2, ValueHeads: 4, KeyDim: 3, ValueDim: 5, Scale: 1 / math.Sqrt(3)}
	q, k, v, g, beta, s0 := randGDN(p, 1)
	rng := rand.New(rand.NewPCG(9, 9))
	w := make([]float64, p.T*p.ValueHeads*p.ValueDim)
	u := make([]float64, len(s0))
	for i := range w {
		w[i] = rng.NormFloat64()
	}
	for i := range u {
		u[i] = rng.NormFloat64()
	}
	loss := func() float64 {
		o, sT := p.Forward(q, k, v, g, beta, s0)
		var l float64
		for i := range o {
			l += o[i] * w[i]
		}
		for i := range sT {
			l += sT[i] * u[i]
		}
		return l
	}
	r := p.Backward(q, k, v, g, beta, s0, w, u)
	for name, pair := range map[string][2][]float64{"q": {q, r.Q}, "k": {k, r.K}, "v": {v, r.V}, "g": {g, r.G}, "beta": {beta, r.Beta}, "s0": {s0, r.S0}} {
		x, dx := pair[0], pair[1]
		for j := range x {
			old := x[j]
			x[j] = old + 1e-6
			up := loss()
			x[j] = old - 1e-6
			down := loss()
			x[j] = old
			num := (up - down) / 2e-6
			if math.Abs(dx[j]-num) > 1e-6*(1+math.Abs(num)) {
				t.Errorf("d%s[%d] = %.10g, numeric %.10g", name, j, dx[j], num)
			}
		}
	}
}

// TestHybridGradientsFiniteDifferences checks every LoRA gradient of a
// hybrid-micro model (three Gated DeltaNet layers and one gated attention
// layer, all ten reference targets) against central differences of the loss.
func TestHybridGradientsFiniteDifferences(t *testing.T) {
	cfg, err := model.Preset("hybrid-micro")
	if err != nil {
		t.Fatal(err)
	}
	m := model.NewRandom(cfg, 1)
	a, err := lora.New(lora.Config{Rank: 2, Alpha: 4, Targets: lora.HybridTargets()}, cfg, 2)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range a.Params {
		for j := range p.Data {
			if p.Data[j] == 0 {
				p.Data[j] = float32(0.05 * math.Sin(float64(i*131+j)))
			}
		}
	}
	be, err := New(m, a)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	w := testWindow()
	if _, err := be.ForwardBackward(ctx, trainer.Batch{Windows: []trainer.Window{w}}, 1); err != nil {
		t.Fatal(err)
	}
	loss := func() float64 {
		l, err := be.Loss(ctx, []trainer.Window{w})
		if err != nil {
			t.Fatal(err)
		}
		return l[0].Loss
	}
	mods := map[string]bool{}
	for _, p := range a.Params {
		mods[p.Name] = true
		for _, j := range []int{0, len(p.Data) / 2, len(p.Data) - 1} {
			old := p.Data[j]
			p.Data[j] = old + 2e-4
			up := loss()
			hu := float64(p.Data[j] - old)
			p.Data[j] = old - 2e-4
			down := loss()
			hd := float64(old - p.Data[j])
			p.Data[j] = old
			num := (up - down) / (hu + hd)
			if got := float64(p.Grad[j]); math.Abs(got-num) > 2e-3*math.Abs(num)+1e-6 {
				t.Errorf("%s[%d]: symbolic %.8g, numeric %.8g", p.Name, j, got, num)
			}
		}
	}
	if len(a.Params) != 2*(3*(3+3)+1*(4+3)) {
		t.Errorf("%d LoRA tensors, want A and B for 3×(in_proj_qkv,in_proj_z,out_proj,MLP) + 1×(q,k,v,o,MLP)", len(a.Params))
	}
}
