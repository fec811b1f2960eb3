package fast

import "math"

// GDNChunk is the default chunk length of the chunked gated delta rule, as
// flash-linear-attention's chunk kernels use.
const GDNChunk = 64

// GDN is the chunked (WY/UT) form of the gated delta rule that the
// reference backend's recurrent GDN defines. Within a chunk of n ≤ Chunk
// tokens with log decays g, Γ = cumsum(g), γ = exp(Γ), entering state S0:
//
//	A[r,s] = β_r·exp(Γ_r−Γ_s)·(k_r·k_s) for s < r;  T = (I + A)⁻¹
//	U = T·(β⊙V);  W = T·(βγ⊙K);  Δ = U − W·S0          (the δ of every step)
//	O = γ⊙(Q·S0) + (M ⊙ Q·Kᵀ)·Δ,  M[r,s] = exp(Γ_r−Γ_s) for s ≤ r
//	S = exp(Γ_n)·S0 + (exp(Γ_n−Γ)⊙K)ᵀ·Δ
//
// with Q already multiplied by Scale. Layouts are the oracle's: q, k
// [T, KeyHeads·KeyDim] (L2-normalized), v and o [T, ValueHeads·ValueDim],
// g and β [T, ValueHeads], states [ValueHeads, KeyDim, ValueDim]; value head
// h reads key head h / (ValueHeads/KeyHeads). Every product inside a chunk is
// an sgemm; key-head groups run in parallel.
type GDN struct {
	T, KeyHeads, ValueHeads, KeyDim, ValueDim int
	Chunk                                     int // 0: GDNChunk
	Scale                                     float32
}

func (p GDN) chunk() int {
	if p.Chunk > 0 {
		return p.Chunk
	}
	return GDNChunk
}

func (p GDN) chunks() int { return (p.T + p.chunk() - 1) / p.chunk() }

// Forward returns o, the final state and the state entering every chunk
// ([chunks, ValueHeads, KeyDim, ValueDim], for Backward). s0 may be nil.
func (p GDN) Forward(q, k, v, g, beta, s0 []float32) (o, sT, entry []float32) {
	ss := p.KeyDim * p.ValueDim
	o = make([]float32, p.T*p.ValueHeads*p.ValueDim)
	sT = make([]float32, p.ValueHeads*ss)
	entry = make([]float32, p.chunks()*p.ValueHeads*ss)
	if s0 != nil {
		copy(sT, s0)
	}
	p.eachHead(func(h int, w *gdnWork) {
		s := sT[h*ss : (h+1)*ss]
		for c := 0; c < p.chunks(); c++ {
			copy(entry[(c*p.ValueHeads+h)*ss:], s)
			w.load(p, q, k, v, g, beta, h, c)
			w.prepare(p, s)
			w.output(p, s, o, h, c)
			w.advance(p, s)
		}
	})
	return o, sT, entry
}

// GDNGrads are the gradients Backward returns.
type GDNGrads struct{ Q, K, V, G, Beta, S0 []float32 }

// Backward returns the gradients for dLoss/do = do and dLoss/dS_T = dsT
// (nil: zero), walking the chunks backwards from the entry states Forward
// returned and recomputing each chunk's T, U, W and Δ.
func (p GDN) Backward(q, k, v, g, beta, entry, do, dsT []float32) GDNGrads {
	ss := p.KeyDim * p.ValueDim
	r := GDNGrads{Q: make([]float32, len(q)), K: make([]float32, len(k)), V: make([]float32, len(v)),
		G: make([]float32, len(g)), Beta: make([]float32, len(beta)), S0: make([]float32, p.ValueHeads*ss)}
	p.eachHead(func(h int, w *gdnWork) {
		ds := r.S0[h*ss : (h+1)*ss]
		if dsT != nil {
			copy(ds, dsT[h*ss:(h+1)*ss])
		}
		for c := p.chunks() - 1; c >= 0; c-- {
			s0 := entry[(c*p.ValueHeads+h)*ss : (c*p.ValueHeads+h+1)*ss]
			w.load(p, q, k, v, g, beta, h, c)
			w.prepare(p, s0)
			w.backward(p, s0, do, ds, &r, h, c)
		}
	})
	return r
}

// eachHead runs f for every value head, the heads of one key head on one
// goroutine (they share the q and k gradient rows).
func (p GDN) eachHead(f func(h int, w *gdnWork)) {
	rep := p.ValueHeads / p.KeyHeads
	fork(p.KeyHeads, func(kh int) {
		w := newGDNWork(p)
		for h := kh * rep; h < (kh+1)*rep; h++ {
			f(h, w)
		}
	})
}

// gdnWork holds one chunk of one head and its intermediates.
type gdnWork struct {
	n                int
	q, k, v          []float32 // [n,dk] (q scaled), [n,dk], [n,dv]
	gam, beta        []float32 // Γ (cumulative log decay) and β, [n]
	kk, a, t, p, m   []float32 // [C,C]: K·Kᵀ, A, T=(I+A)⁻¹, Q·Kᵀ, masked decay
	bv, bk, u, w, d  []float32 // β⊙V, βγ⊙K, U, W, Δ
	qs, tail         []float32 // Q·S0 [n,dv]; exp(Γ_n−Γ_s) [n]
	tmpC, tmpK, tmpV []float32
	bw               *gdnBack
}

func newGDNWork(p GDN) *gdnWork {
	C, dk, dv := p.chunk(), p.KeyDim, p.ValueDim
	f := func(n int) []float32 { return make([]float32, n) }
	return &gdnWork{q: f(C * dk), k: f(C * dk), v: f(C * dv), gam: f(C), beta: f(C),
		kk: f(C * C), a: f(C * C), t: f(C * C), p: f(C * C), m: f(C * C),
		bv: f(C * dv), bk: f(C * dk), u: f(C * dv), w: f(C * dk), d: f(C * dv), qs: f(C * dv), tail: f(C),
		tmpC: f(C * C), tmpK: f(C * dk), tmpV: f(C * dv)}
}

// load gathers chunk c of value head h.
func (w *gdnWork) load(p GDN, q, k, v, g, beta []float32, h, c int) {
	C, dk, dv, nv := p.chunk(), p.KeyDim, p.ValueDim, p.ValueHeads
	kh := h / (nv / p.KeyHeads)
	t0 := c * C
	w.n = min(C, p.T-t0)
	var acc float32
	for r := 0; r < w.n; r++ {
		t := t0 + r
		qo := (t*p.KeyHeads + kh) * dk
		for i := 0; i < dk; i++ {
			w.q[r*dk+i] = p.Scale * q[qo+i]
		}
		copy(w.k[r*dk:(r+1)*dk], k[qo:qo+dk])
		copy(w.v[r*dv:(r+1)*dv], v[(t*nv+h)*dv:(t*nv+h+1)*dv])
		acc += g[t*nv+h]
		w.gam[r], w.beta[r] = acc, beta[t*nv+h]
	}
}

func exp32(x float32) float32 { return float32(math.Exp(float64(x))) }

// prepare computes A, T, U, W and Δ for entering state s0.
func (w *gdnWork) prepare(p GDN, s0 []float32) {
	n, C, dk, dv := w.n, p.chunk(), p.KeyDim, p.ValueDim
	sgemm(false, true, n, n, dk, 1, w.k, dk, w.k, dk, 0, w.kk, C)
	sgemm(false, true, n, n, dk, 1, w.q, dk, w.k, dk, 0, w.p, C)
	for r := 0; r < n; r++ {
		for s := 0; s < n; s++ {
			e := float32(0)
			if s <= r {
				e = exp32(w.gam[r] - w.gam[s])
			}
			w.m[r*C+s] = e
			w.a[r*C+s] = 0
			if s < r {
				w.a[r*C+s] = w.beta[r] * e * w.kk[r*C+s]
			}
		}
		w.tail[r] = exp32(w.gam[n-1] - w.gam[r])
		bg := w.beta[r] * exp32(w.gam[r])
		for j := 0; j < dv; j++ {
			w.bv[r*dv+j] = w.beta[r] * w.v[r*dv+j]
		}
		for i := 0; i < dk; i++ {
			w.bk[r*dk+i] = bg * w.k[r*dk+i]
		}
	}
	// T = (I + A)⁻¹ by forward substitution, row by row (unit lower triangular).
	for r := 0; r < n; r++ {
		tr := w.t[r*C : r*C+n]
		clear(tr)
		tr[r] = 1
		for s := 0; s < r; s++ {
			if a := w.a[r*C+s]; a != 0 {
				ts := w.t[s*C : s*C+s+1]
				for j, x := range ts {
					tr[j] -= a * x
				}
			}
		}
	}
	sgemm(false, false, n, dv, n, 1, w.t, C, w.bv, dv, 0, w.u, dv)
	sgemm(false, false, n, dk, n, 1, w.t, C, w.bk, dk, 0, w.w, dk)
	copy(w.d[:n*dv], w.u[:n*dv])
	sgemm(false, false, n, dv, dk, -1, w.w, dk, s0, dv, 1, w.d, dv)
	sgemm(false, false, n, dv, dk, 1, w.q, dk, s0, dv, 0, w.qs, dv)
}

// output writes chunk c of head h: γ⊙(Q·S0) + (M⊙P)·Δ.
func (w *gdnWork) output(p GDN, s0, o []float32, h, c int) {
	n, C, dv, nv := w.n, p.chunk(), p.ValueDim, p.ValueHeads
	for r := 0; r < n; r++ {
		for s := 0; s <= r; s++ {
			w.tmpC[r*C+s] = w.m[r*C+s] * w.p[r*C+s]
		}
		for s := r + 1; s < n; s++ {
			w.tmpC[r*C+s] = 0
		}
		g := exp32(w.gam[r])
		for j := 0; j < dv; j++ {
			w.tmpV[r*dv+j] = g * w.qs[r*dv+j]
		}
	}
	sgemm(false, false, n, dv, n, 1, w.tmpC, C, w.d, dv, 1, w.tmpV, dv)
	for r := 0; r < n; r++ {
		t := c*C + r
		copy(o[(t*nv+h)*dv:(t*nv+h+1)*dv], w.tmpV[r*dv:(r+1)*dv])
	}
}

// advance moves s from the chunk's entry to its exit state.
func (w *gdnWork) advance(p GDN, s []float32) {
	n, dk, dv := w.n, p.KeyDim, p.ValueDim
	last := exp32(w.gam[n-1])
	for i := range s {
		s[i] *= last
	}
	for r := 0; r < n; r++ {
		for i := 0; i < dk; i++ {
			w.tmpK[r*dk+i] = w.tail[r] * w.k[r*dk+i]
		}
	}
	sgemm(true, false, dk, dv, n, 1, w.tmpK, dk, w.d, dv, 1, s, dv)
}
