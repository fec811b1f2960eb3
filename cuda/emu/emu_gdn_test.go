//go:build masscudaemu

package emu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mass-dev/mass/cuda"
)

// TestGDNChunkForward runs gdn_chunk_fwd and gdn_chunk_bwd (chunked gated delta rule) against
// the recurrent Go references (forward, and backpropagation through time): lengths below one chunk, exactly one, and several with an odd remainder,
// with and without an initial state, grouped key heads.
func TestGDNChunkForward(t *testing.T) {
	const nk, nv, dk, dv = 2, 4, 8, 4
	for _, tc := range []struct{ T, C int }{{5, 16}, {16, 16}, {37, 16}, {70, 64}} {
		for _, withState := range []bool{false, true} {
			t.Run(fmt.Sprintf("T%d/C%d/state=%v", tc.T, tc.C, withState), func(t *testing.T) {
				e := newEnv(t)
				r := rand.New(rand.NewPCG(uint64(tc.T), 3))
				unit := func(n int) []float32 {
					x := randF(r, n, 1)
					for s := 0; s < n; s += dk {
						var ss float64
						for _, v := range x[s : s+dk] {
							ss += float64(v) * float64(v)
						}
						for i := s; i < s+dk; i++ {
							x[i] /= float32(math.Sqrt(ss))
						}
					}
					return x
				}
				q, k := unit(tc.T*nk*dk), unit(tc.T*nk*dk)
				v := randF(r, tc.T*nv*dv, 1)
				g, beta := make([]float32, tc.T*nv), make([]float32, tc.T*nv)
				for i := range g {
					g[i], beta[i] = float32(-0.4*r.Float64()), float32(r.Float64())
				}
				var s0 []float32
				s0m := uint64(0)
				if withState {
					s0 = randF(r, nv*dk*dv, 0.5)
					s0m = P(e.f32(s0))
				}
				wo, ws := cuda.GatedDeltaRule(q, k, v, g, beta, s0, tc.T, nk, nv, dk, dv, 0.35)
				o, sOut := e.out(4*len(wo)), e.out(4*len(ws))
				chunks := (tc.T + tc.C - 1) / tc.C
				entry := e.out(4 * chunks * nv * dk * dv)
				work := e.out(4 * nv * cuda.GDNWorkFloats(tc.C, dk, dv))
				qm, km, vm, gm, bm := e.f32(q), e.f32(k), e.f32(v), e.f32(g), e.f32(beta)
				e.launch("gdn_chunk_fwd", g1(nv), 64, 0, P(o), P(sOut), P(entry), P(qm), P(km), P(vm),
					P(gm), P(bm), s0m, P(work), I(tc.T), I(nk), I(nv), I(dk), I(dv), I(tc.C), F(0.35))
				e.check("gdn o", o.GetF32(len(wo)), wo, 1e-4)
				e.check("gdn final state", sOut.GetF32(len(ws)), ws, 1e-4)

				do, dsT := randF(r, len(wo), 1), randF(r, len(ws), 1)
				want := cuda.GatedDeltaRuleBackward(q, k, v, g, beta, s0, do, dsT, tc.T, nk, nv, dk, dv, 0.35)
				dq, dkm, dvm := e.out(4*len(q)), e.out(4*len(k)), e.out(4*len(v))
				dg, db, ds0 := e.out(4*len(g)), e.out(4*len(beta)), e.out(4*len(ws))
				bwork := e.out(4 * nk * cuda.GDNBackWorkFloats(tc.C, dk, dv))
				e.launch("gdn_chunk_bwd", g1(nk), 64, 0, P(dq), P(dkm), P(dvm), P(dg), P(db), P(ds0),
					P(qm), P(km), P(vm), P(gm), P(bm), P(entry), P(e.f32(do)), P(e.f32(dsT)), P(bwork),
					I(tc.T), I(nk), I(nv), I(dk), I(dv), I(tc.C), F(0.35))
				e.check("gdn dq", dq.GetF32(len(q)), want.Q, 2e-4)
				e.check("gdn dk", dkm.GetF32(len(k)), want.K, 2e-4)
				e.check("gdn dv", dvm.GetF32(len(v)), want.V, 2e-4)
				e.check("gdn dg", dg.GetF32(len(g)), want.G, 2e-4)
				e.check("gdn dbeta", db.GetF32(len(beta)), want.Beta, 2e-4)
				e.check("gdn ds0", ds0.GetF32(len(ws)), want.S0, 2e-4)
			})
		}
	}
}

func randF(r *rand.Rand, n int, s float64) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(r.NormFloat64() * s)
	}
	return out
}
