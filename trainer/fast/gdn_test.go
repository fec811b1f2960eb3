package fast

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mass-dev/mass/trainer/refbackend"
)

type gdnCase struct {
	q, k, v, g, beta, s0, do, dsT []float64
}

func gdnInputs(p refbackend.GDN, seed uint64, withState bool) gdnCase {
	rng := rand.New(rand.NewPCG(seed, 11))
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
	c := gdnCase{q: normed(), k: normed(), v: vec(p.T*p.ValueHeads*p.ValueDim, rng.NormFloat64),
		g:    vec(p.T*p.ValueHeads, func() float64 { return -0.3 * rng.Float64() }),
		beta: vec(p.T*p.ValueHeads, rng.Float64),
		do:   vec(p.T*p.ValueHeads*p.ValueDim, rng.NormFloat64),
		dsT:  vec(p.ValueHeads*p.KeyDim*p.ValueDim, rng.NormFloat64)}
	if withState {
		c.s0 = vec(p.ValueHeads*p.KeyDim*p.ValueDim, func() float64 { return 0.5 * rng.NormFloat64() })
	}
	return c
}

func to32(x []float64) []float32 {
	if x == nil {
		return nil
	}
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = float32(v)
	}
	return out
}

func relErr32(got []float32, want []float64) float64 {
	var num, den float64
	for i := range want {
		d := float64(got[i]) - want[i]
		num += d * d
		den += want[i] * want[i]
	}
	return math.Sqrt(num / math.Max(den, 1e-30))
}

// TestGDNChunkedMatchesRecurrent holds the chunked (WY/UT) gated delta rule
// in float32 to the reference backend's recurrent float64 oracle, forward
// (outputs, final state) and backward (q, k, v, g, β, initial state), with
// and without an initial state, for lengths that fill no chunk, one, and
// several with an odd remainder, at FLA's chunk size and a small one.
func TestGDNChunkedMatchesRecurrent(t *testing.T) {
	initBLAS()
	for _, chunk := range []int{64, 16} {
		for _, T := range []int{1, 37, 64, 65, 130, 203} {
			for _, withState := range []bool{false, true} {
				name := fmt.Sprintf("chunk%d/T%d/state=%v", chunk, T, withState)
				t.Run(name, func(t *testing.T) {
					ref := refbackend.GDN{T: T, KeyHeads: 2, ValueHeads: 4, KeyDim: 16, ValueDim: 8, Scale: 0.25}
					c := gdnInputs(ref, uint64(T*7+chunk), withState)
					p := GDN{T: T, KeyHeads: 2, ValueHeads: 4, KeyDim: 16, ValueDim: 8, Chunk: chunk, Scale: 0.25}
					o, sT, entry := p.Forward(to32(c.q), to32(c.k), to32(c.v), to32(c.g), to32(c.beta), to32(c.s0))
					wo, wsT := ref.Forward(c.q, c.k, c.v, c.g, c.beta, c.s0)
					wr := ref.Backward(c.q, c.k, c.v, c.g, c.beta, c.s0, c.do, c.dsT)
					gr := p.Backward(to32(c.q), to32(c.k), to32(c.v), to32(c.g), to32(c.beta), entry, to32(c.do), to32(c.dsT))
					checks := []struct {
						what string
						got  []float32
						want []float64
					}{{"o", o, wo}, {"final state", sT, wsT}, {"dq", gr.Q, wr.Q}, {"dk", gr.K, wr.K}, {"dv", gr.V, wr.V},
						{"dg", gr.G, wr.G}, {"dbeta", gr.Beta, wr.Beta}, {"ds0", gr.S0, wr.S0}}
					for _, ch := range checks {
						if e := relErr32(ch.got, ch.want); e > 2e-5 || math.IsNaN(e) {
							t.Errorf("%s: relative error %.3g", ch.what, e)
						}
					}
				})
			}
		}
	}
}
