package refbackend

import "math"

// GDN is the gated delta rule of a Qwen3.5/3.6 Gated DeltaNet layer in its
// recurrent form, the oracle the chunked fast paths are held to. Per value
// head h (reading key head h / (ValueHeads/KeyHeads)) with state S (KeyDim ×
// ValueDim), at each step t:
//
//	S ← exp(g_t)·S;  δ = β_t·(v_t − Sᵀk_t);  S ← S + k_t δᵀ;  o_t = Sᵀ(Scale·q_t)
//
// q and k arrive L2-normalized, [T, KeyHeads·KeyDim]; v and o are
// [T, ValueHeads·ValueDim]; g (log decay) and β are [T, ValueHeads]; states
// are [ValueHeads, KeyDim, ValueDim]. All slices are row-major float64.
type GDN struct {
	T, KeyHeads, ValueHeads, KeyDim, ValueDim int
	Scale                                     float64
}

func (p GDN) stateSize() int { return p.KeyDim * p.ValueDim }

// Forward returns o and the final state; s0 may be nil (zeros).
func (p GDN) Forward(q, k, v, g, beta, s0 []float64) (o, sT []float64) {
	dk, dv, nv := p.KeyDim, p.ValueDim, p.ValueHeads
	o = make([]float64, p.T*nv*dv)
	sT = make([]float64, nv*p.stateSize())
	if s0 != nil {
		copy(sT, s0)
	}
	m := make([]float64, dv)
	for h := 0; h < nv; h++ {
		s := sT[h*p.stateSize() : (h+1)*p.stateSize()]
		for t := 0; t < p.T; t++ {
			qt, kt, vt := p.qk(q, t, h), p.qk(k, t, h), v[(t*nv+h)*dv:(t*nv+h+1)*dv]
			p.step(s, kt, vt, g[t*nv+h], beta[t*nv+h], m)
			ot := o[(t*nv+h)*dv : (t*nv+h+1)*dv]
			for i := 0; i < dk; i++ {
				c := p.Scale * qt[i]
				for j := 0; j < dv; j++ {
					ot[j] += c * s[i*dv+j]
				}
			}
		}
	}
	return o, sT
}

// qk returns the key-head row of q or k that value head h reads at step t.
func (p GDN) qk(x []float64, t, h int) []float64 {
	kh := h / (p.ValueHeads / p.KeyHeads)
	off := (t*p.KeyHeads + kh) * p.KeyDim
	return x[off : off+p.KeyDim]
}

// step advances s by one token and leaves Sᵀk (after decay) in m; it returns
// nothing else so that the backward pass can replay it.
func (p GDN) step(s, kt, vt []float64, g, beta float64, m []float64) {
	dk, dv := p.KeyDim, p.ValueDim
	e := math.Exp(g)
	for i := range s {
		s[i] *= e
	}
	clear(m)
	for i := 0; i < dk; i++ {
		for j := 0; j < dv; j++ {
			m[j] += s[i*dv+j] * kt[i]
		}
	}
	for i := 0; i < dk; i++ {
		for j := 0; j < dv; j++ {
			s[i*dv+j] += kt[i] * beta * (vt[j] - m[j])
		}
	}
}

// GDNGrads are the gradients of Backward.
type GDNGrads struct{ Q, K, V, G, Beta, S0 []float64 }

// Backward returns the gradients of a loss with dLoss/do = do and
// dLoss/dS_T = dsT (nil: zero) by backpropagation through time, replaying
// the forward states.
func (p GDN) Backward(q, k, v, g, beta, s0, do, dsT []float64) GDNGrads {
	dv, nv, ss := p.ValueDim, p.ValueHeads, p.stateSize()
	r := GDNGrads{Q: make([]float64, len(q)), K: make([]float64, len(k)), V: make([]float64, len(v)),
		G: make([]float64, len(g)), Beta: make([]float64, len(beta)), S0: make([]float64, nv*ss)}
	prev := make([]float64, p.T*ss) // state before step t
	m := make([]float64, p.T*dv)    // Sᵀk after the decay of step t
	dS, dSp, dd := make([]float64, ss), make([]float64, ss), make([]float64, dv)
	for h := 0; h < nv; h++ {
		s := make([]float64, ss)
		if s0 != nil {
			copy(s, s0[h*ss:(h+1)*ss])
		}
		for t := 0; t < p.T; t++ {
			copy(prev[t*ss:(t+1)*ss], s)
			p.step(s, p.qk(k, t, h), v[(t*nv+h)*dv:(t*nv+h+1)*dv], g[t*nv+h], beta[t*nv+h], m[t*dv:(t+1)*dv])
		}
		clear(dS)
		if dsT != nil {
			copy(dS, dsT[h*ss:(h+1)*ss])
		}
		for t := p.T - 1; t >= 0; t-- {
			p.stepBack(h, t, q, k, v, g, beta, do, prev[t*ss:(t+1)*ss], m[t*dv:(t+1)*dv], s, dS, dSp, dd, &r)
		}
		copy(r.S0[h*ss:(h+1)*ss], dS)
	}
	return r
}

// stepBack undoes step t of head h: s receives S_t, dS holds dLoss/dS_t on
// entry and dLoss/dS_{t-1} on return.
func (p GDN) stepBack(h, t int, q, k, v, g, beta, do, sPrev, mt, s, dS, dSp, dd []float64, r *GDNGrads) {
	dk, dv, nv := p.KeyDim, p.ValueDim, p.ValueHeads
	kh := h / (nv / p.KeyHeads)
	qo, ko, vo := (t*p.KeyHeads+kh)*dk, (t*p.KeyHeads+kh)*dk, (t*nv+h)*dv
	qt, kt, vt, dot := q[qo:qo+dk], k[ko:ko+dk], v[vo:vo+dv], do[vo:vo+dv]
	e, b := math.Exp(g[t*nv+h]), beta[t*nv+h]
	// S_t = e·S_{t-1} + k δᵀ, δ = b(v − m).
	for i := 0; i < dk; i++ {
		for j := 0; j < dv; j++ {
			s[i*dv+j] = e*sPrev[i*dv+j] + kt[i]*b*(vt[j]-mt[j])
		}
	}
	for i := 0; i < dk; i++ {
		var acc float64
		for j := 0; j < dv; j++ {
			dS[i*dv+j] += p.Scale * qt[i] * dot[j]
			acc += s[i*dv+j] * dot[j]
		}
		r.Q[qo+i] += p.Scale * acc
	}
	clear(dd)
	for i := 0; i < dk; i++ {
		var acc float64
		for j := 0; j < dv; j++ {
			acc += dS[i*dv+j] * b * (vt[j] - mt[j])
			dd[j] += dS[i*dv+j] * kt[i]
		}
		r.K[ko+i] += acc
	}
	var dbeta float64
	for j := 0; j < dv; j++ {
		r.V[vo+j] += b * dd[j]
		dbeta += dd[j] * (vt[j] - mt[j])
		dd[j] *= -b // now dLoss/dm
	}
	r.Beta[t*nv+h] += dbeta
	var dg float64
	for i := 0; i < dk; i++ {
		var acc float64
		for j := 0; j < dv; j++ {
			dSp[i*dv+j] = dS[i*dv+j] + kt[i]*dd[j]
			acc += e * sPrev[i*dv+j] * dd[j]
			dg += dSp[i*dv+j] * e * sPrev[i*dv+j]
		}
		r.K[ko+i] += acc
	}
	r.G[t*nv+h] += dg
	for i := range dS {
		dS[i] = e * dSp[i]
	}
}
