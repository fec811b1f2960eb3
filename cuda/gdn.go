package cuda

import "math"

// GDNWorkFloats is the scratch gdn_chunk_fwd needs per value head, in floats.
func GDNWorkFloats(chunk, dk, dv int) int { return dk*dv + chunk*(3*dk+3*dv+3*chunk+2) }

// GatedDeltaRule is the reference for gdn_chunk_fwd: the recurrent gated delta rule in
// float64. Per value head h (key head h/(nv/nk)) and step t: S ← exp(g)·S;
// δ = β·(v − Sᵀk); S ← S + k δᵀ; o = Sᵀ(scale·q). Layouts as the kernel's; s0 may be nil.
func GatedDeltaRule(q, k, v, g, beta, s0 []float32, t, nk, nv, dk, dv int, scale float32) (o, sT []float32) {
	o, sT = make([]float32, t*nv*dv), make([]float32, nv*dk*dv)
	s, m := make([]float64, dk*dv), make([]float64, dv)
	for h := 0; h < nv; h++ {
		kh := h / (nv / nk)
		for i := range s {
			s[i] = 0
			if s0 != nil {
				s[i] = float64(s0[h*dk*dv+i])
			}
		}
		for step := 0; step < t; step++ {
			kt, qt := k[(step*nk+kh)*dk:], q[(step*nk+kh)*dk:]
			vt, gi := v[(step*nv+h)*dv:], step*nv+h
			e := math.Exp(float64(g[gi]))
			clear(m)
			for i := 0; i < dk; i++ {
				for j := 0; j < dv; j++ {
					s[i*dv+j] *= e
					m[j] += s[i*dv+j] * float64(kt[i])
				}
			}
			for i := 0; i < dk; i++ {
				for j := 0; j < dv; j++ {
					s[i*dv+j] += float64(kt[i]) * float64(beta[gi]) * (float64(vt[j]) - m[j])
				}
			}
			for j := 0; j < dv; j++ {
				var acc float64
				for i := 0; i < dk; i++ {
					acc += s[i*dv+j] * float64(scale) * float64(qt[i])
				}
				o[(step*nv+h)*dv+j] = float32(acc)
			}
		}
		for i, x := range s {
			sT[h*dk*dv+i] = float32(x)
		}
	}
	return o, sT
}

// GDNBackWorkFloats is the scratch gdn_chunk_bwd needs per key head, in floats.
func GDNBackWorkFloats(chunk, dk, dv int) int {
	return GDNWorkFloats(chunk, dk, dv) + 2*dk*dv + chunk*(4*dv+4*dk+5*chunk+3)
}

// GDNGrads are the gradients of GatedDeltaRuleBackward.
type GDNGrads struct{ Q, K, V, G, Beta, S0 []float32 }

// GatedDeltaRuleBackward is the reference for gdn_chunk_bwd: backpropagation through
// time of GatedDeltaRule for dLoss/do = do and dLoss/dS_T = dsT (nil: zero), float64.
func GatedDeltaRuleBackward(q, k, v, g, beta, s0, do, dsT []float32, t, nk, nv, dk, dv int, scale float32) GDNGrads {
	f := func(x []float32, i int) float64 { return float64(x[i]) }
	r := GDNGrads{Q: make([]float32, len(q)), K: make([]float32, len(k)), V: make([]float32, len(v)),
		G: make([]float32, len(g)), Beta: make([]float32, len(beta)), S0: make([]float32, nv*dk*dv)}
	ss := dk * dv
	for h := 0; h < nv; h++ {
		kh := h / (nv / nk)
		prev := make([][]float64, t) // state before step
		ms := make([][]float64, t)   // Sᵀk after the decay
		s := make([]float64, ss)
		for i := range s {
			if s0 != nil {
				s[i] = f(s0, h*ss+i)
			}
		}
		for st := 0; st < t; st++ {
			prev[st] = append([]float64(nil), s...)
			ko, gi := (st*nk+kh)*dk, st*nv+h
			e, m := math.Exp(f(g, gi)), make([]float64, dv)
			for i := 0; i < dk; i++ {
				for j := 0; j < dv; j++ {
					s[i*dv+j] *= e
					m[j] += s[i*dv+j] * f(k, ko+i)
				}
			}
			for i := 0; i < dk; i++ {
				for j := 0; j < dv; j++ {
					s[i*dv+j] += f(k, ko+i) * f(beta, gi) * (f(v, gi*dv+j) - m[j])
				}
			}
			ms[st] = m
		}
		dS := make([]float64, ss)
		for i := range dS {
			if dsT != nil {
				dS[i] = f(dsT, h*ss+i)
			}
		}
		for st := t - 1; st >= 0; st-- {
			ko, gi := (st*nk+kh)*dk, st*nv+h
			e, b, m := math.Exp(f(g, gi)), f(beta, gi), ms[st]
			dd, dm := make([]float64, dv), make([]float64, dv)
			var dbeta, dgl float64
			for i := 0; i < dk; i++ {
				var dq, dkk float64
				for j := 0; j < dv; j++ {
					sij := e*prev[st][i*dv+j] + f(k, ko+i)*b*(f(v, gi*dv+j)-m[j])
					dS[i*dv+j] += float64(scale) * f(q, ko+i) * f(do, gi*dv+j)
					dq += sij * f(do, gi*dv+j)
					dkk += dS[i*dv+j] * b * (f(v, gi*dv+j) - m[j])
					dd[j] += dS[i*dv+j] * f(k, ko+i)
				}
				r.Q[ko+i] += float32(float64(scale) * dq)
				r.K[ko+i] += float32(dkk)
			}
			for j := 0; j < dv; j++ {
				r.V[gi*dv+j] = float32(b * dd[j])
				dbeta += dd[j] * (f(v, gi*dv+j) - m[j])
				dm[j] = -b * dd[j]
			}
			for i := 0; i < dk; i++ {
				var acc float64
				for j := 0; j < dv; j++ {
					dsp := dS[i*dv+j] + f(k, ko+i)*dm[j]
					acc += e * prev[st][i*dv+j] * dm[j]
					dgl += dsp * e * prev[st][i*dv+j]
					dS[i*dv+j] = e * dsp
				}
				r.K[ko+i] += float32(acc)
			}
			r.Beta[gi], r.G[gi] = float32(dbeta), float32(dgl)
		}
		for i, x := range dS {
			r.S0[h*ss+i] = float32(x)
		}
	}
	return r
}
