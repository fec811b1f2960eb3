package fast

// gdnBack holds the backward pass buffers of one gdnWork.
type gdnBack struct {
	dO, dD, dBV, tmpV []float32 // [C,dv]
	dQ, dK, dBK, tmpK []float32 // [C,dk]
	dPM, dA, dKK, pm  []float32 // [C,C]
	dGam              []float32 // [C]
	newDS             []float32 // [dk,dv]
}

func newGDNBack(p GDN) *gdnBack {
	C, dk, dv := p.chunk(), p.KeyDim, p.ValueDim
	f := func(n int) []float32 { return make([]float32, n) }
	return &gdnBack{dO: f(C * dv), dD: f(C * dv), dBV: f(C * dv), tmpV: f(C * dv),
		dQ: f(C * dk), dK: f(C * dk), dBK: f(C * dk), tmpK: f(C * dk),
		dPM: f(C * C), dA: f(C * C), dKK: f(C * C), pm: f(C * C), dGam: f(C), newDS: f(dk * dv)}
}

func dot32(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// backward accumulates chunk c of head h into r; ds holds dLoss/d(exit
// state) on entry and dLoss/d(entry state) on return. prepare ran for s0.
func (w *gdnWork) backward(p GDN, s0, do, ds []float32, r *GDNGrads, h, c int) {
	if w.bw == nil {
		w.bw = newGDNBack(p)
	}
	b := w.bw
	n, C, dk, dv, nv := w.n, p.chunk(), p.KeyDim, p.ValueDim, p.ValueHeads
	for i := 0; i < n; i++ {
		t := c*C + i
		copy(b.dO[i*dv:(i+1)*dv], do[(t*nv+h)*dv:(t*nv+h+1)*dv])
		for j := 0; j < n; j++ {
			b.pm[i*C+j] = 0
			if j <= i {
				b.pm[i*C+j] = w.m[i*C+j] * w.p[i*C+j]
			}
		}
	}
	clear(b.dGam)
	// dΔ = (M⊙P)ᵀ·dO + (tail⊙K)·dS.
	for i := 0; i < n; i++ {
		for j := 0; j < dk; j++ {
			b.tmpK[i*dk+j] = w.tail[i] * w.k[i*dk+j]
		}
	}
	sgemm(true, false, n, dv, n, 1, b.pm, C, b.dO, dv, 0, b.dD, dv)
	sgemm(false, false, n, dv, dk, 1, b.tmpK, dk, ds, dv, 1, b.dD, dv)
	// Through O = γ⊙(Q·S0) + (M⊙P)·Δ.
	sgemm(false, true, n, n, dv, 1, b.dO, dv, w.d, dv, 0, b.dPM, C)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if j > i {
				b.dPM[i*C+j] = 0
				continue
			}
			x := b.dPM[i*C+j]
			de := x * w.p[i*C+j] * w.m[i*C+j]
			b.dGam[i] += de
			b.dGam[j] -= de
			b.dPM[i*C+j] = x * w.m[i*C+j] // now dP
		}
	}
	sgemm(false, false, n, dk, n, 1, b.dPM, C, w.k, dk, 0, b.dQ, dk)
	sgemm(true, false, n, dk, n, 1, b.dPM, C, w.q, dk, 0, b.dK, dk)
	sgemm(false, true, n, dk, dv, 1, b.dO, dv, s0, dv, 0, b.tmpK, dk)
	for i := 0; i < n; i++ {
		g := exp32(w.gam[i])
		for j := 0; j < dk; j++ {
			b.dQ[i*dk+j] += g * b.tmpK[i*dk+j]
		}
		b.dGam[i] += g * dot32(b.dO[i*dv:(i+1)*dv], w.qs[i*dv:(i+1)*dv])
		for j := 0; j < dv; j++ {
			b.tmpV[i*dv+j] = g * b.dO[i*dv+j]
		}
	}
	w.backState(p, s0, ds)
	w.backSolve(p, s0)
	w.scatter(p, r, h, c)
	copy(ds, b.newDS)
}

// backState handles S_exit = exp(Γ_n)·S0 + (tail⊙K)ᵀ·Δ and the Q·S0 term of
// the entry state's gradient (tmpV holds γ⊙dO).
func (w *gdnWork) backState(p GDN, s0, ds []float32) {
	b := w.bw
	n, dk, dv := w.n, p.KeyDim, p.ValueDim
	last := exp32(w.gam[n-1])
	for i := range b.newDS {
		b.newDS[i] = last * ds[i]
	}
	b.dGam[n-1] += last * dot32(ds, s0)
	sgemm(true, false, dk, dv, n, 1, w.q, dk, b.tmpV, dv, 1, b.newDS, dv)
	sgemm(true, false, dk, dv, n, -1, w.w, dk, b.dD, dv, 1, b.newDS, dv)
	// tail_s = exp(Γ_n − Γ_s): dc_s = k_s·(dS·Δ_s).
	sgemm(false, false, n, dv, dk, 1, w.k, dk, ds, dv, 0, b.tmpV, dv)
	sgemm(false, true, n, dk, dv, 1, w.d, dv, ds, dv, 0, b.tmpK, dk)
	for s := 0; s < n; s++ {
		dc := w.tail[s] * dot32(b.tmpV[s*dv:(s+1)*dv], w.d[s*dv:(s+1)*dv])
		b.dGam[n-1] += dc
		b.dGam[s] -= dc
		for j := 0; j < dk; j++ {
			b.dK[s*dk+j] += w.tail[s] * b.tmpK[s*dk+j]
		}
	}
}

// backSolve goes through Δ = U − W·S0, U = T·(β⊙V), W = T·(βγ⊙K) and
// A = β⊙exp(ΔΓ)⊙K·Kᵀ.
func (w *gdnWork) backSolve(p GDN, s0 []float32) {
	b := w.bw
	n, C, dk, dv := w.n, p.chunk(), p.KeyDim, p.ValueDim
	sgemm(false, true, n, dk, dv, -1, b.dD, dv, s0, dv, 0, b.tmpK, dk) // dW
	sgemm(true, false, n, dv, n, 1, w.t, C, b.dD, dv, 0, b.dBV, dv)
	sgemm(true, false, n, dk, n, 1, w.t, C, b.tmpK, dk, 0, b.dBK, dk)
	sgemm(false, true, n, n, dv, -1, b.dBV, dv, w.u, dv, 0, b.dA, C)
	sgemm(false, true, n, n, dk, -1, b.dBK, dk, w.w, dk, 1, b.dA, C)
	for i := 0; i < n; i++ {
		g := exp32(w.gam[i])
		bk := dot32(b.dBK[i*dk:(i+1)*dk], w.k[i*dk:(i+1)*dk])
		w.tmpC[i] = dot32(b.dBV[i*dv:(i+1)*dv], w.v[i*dv:(i+1)*dv]) + g*bk // dβ_i
		b.dGam[i] += w.beta[i] * g * bk
		for j := 0; j < dk; j++ {
			b.dK[i*dk+j] += w.beta[i] * g * b.dBK[i*dk+j]
		}
		for j := 0; j < dv; j++ {
			b.dBV[i*dv+j] *= w.beta[i] // now dV
		}
		for j := 0; j < n; j++ {
			b.dKK[i*C+j] = 0
			if j >= i {
				continue
			}
			a, e := b.dA[i*C+j], w.m[i*C+j]
			w.tmpC[i] += a * e * w.kk[i*C+j]
			b.dKK[i*C+j] = a * w.beta[i] * e
			de := a * w.beta[i] * w.kk[i*C+j] * e
			b.dGam[i] += de
			b.dGam[j] -= de
		}
	}
	sgemm(false, false, n, dk, n, 1, b.dKK, C, w.k, dk, 1, b.dK, dk)
	sgemm(true, false, n, dk, n, 1, b.dKK, C, w.k, dk, 1, b.dK, dk)
}

// scatter adds the chunk's gradients into r (dβ is in tmpC[:n]).
func (w *gdnWork) scatter(p GDN, r *GDNGrads, h, c int) {
	b := w.bw
	n, C, dk, dv, nv := w.n, p.chunk(), p.KeyDim, p.ValueDim, p.ValueHeads
	kh := h / (nv / p.KeyHeads)
	var acc float32
	for i := n - 1; i >= 0; i-- {
		t := c*C + i
		ko := (t*p.KeyHeads + kh) * dk
		for j := 0; j < dk; j++ {
			r.Q[ko+j] += p.Scale * b.dQ[i*dk+j]
			r.K[ko+j] += b.dK[i*dk+j]
		}
		copy(r.V[(t*nv+h)*dv:(t*nv+h+1)*dv], b.dBV[i*dv:(i+1)*dv])
		r.Beta[t*nv+h] = w.tmpC[i]
		acc += b.dGam[i]
		r.G[t*nv+h] = acc
	}
}
