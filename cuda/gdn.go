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
