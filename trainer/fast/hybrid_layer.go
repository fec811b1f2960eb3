package fast

import "math"

// hybridActs are what a hybrid layer's backward needs beyond acts.
type hybridActs struct {
	// Gated attention: the gate half of q_proj and the ungated output.
	qg, gate, gated []float32
	// Gated DeltaNet.
	qkv, pre, q0, k0, q, k, v, z, braw, araw, g, beta, entry, o, y []float32
	uqkv, uz, uout                                                 []float32
}

// hybridForward runs layer l of a Qwen3.5/3.6 hybrid on the residual x.
func (r *run) hybridForward(l int, x []float32) *acts {
	ly := &r.b.layers[l]
	c := r.b.cfg
	a := &acts{xin: x, hy: &hybridActs{}}
	a.h1 = rmsNorm(x, ly.inNorm, c.RMSNormEps)
	var mix []float32
	if ly.hy.linear {
		mix = r.deltaNetForward(l, a)
	} else {
		mix = r.gatedAttnForward(l, a)
	}
	addInto(mix, x)
	a.x1 = mix
	r.mlpForward(l, a)
	return a
}

// hybridBackward returns the gradient of layer l's input.
func (r *run) hybridBackward(l int, a *acts, dx2 []float32) []float32 {
	ly := &r.b.layers[l]
	dx1 := r.mlpBackward(l, a, dx2)
	var dh1 []float32
	if ly.hy.linear {
		dh1 = r.deltaNetBackward(l, a, dx1)
	} else {
		dh1 = r.gatedAttnBackward(l, a, dx1)
	}
	return rmsNormBack(a.xin, ly.inNorm, dh1, r.b.cfg.RMSNormEps, dx1)
}

// gatedAttnForward: q_proj gives per head [query | gate]; q/k norms; partial
// RoPE; causal GQA; output·sigmoid(gate); o_proj.
func (r *run) gatedAttnForward(l int, a *acts) []float32 {
	ly := &r.b.layers[l]
	c := r.b.cfg
	h, t, hd := a.hy, r.t, c.HeadDim
	h.qg, a.u[0] = r.linear(&ly.q, l, a.h1)
	a.qraw, h.gate = h.qg, nil
	if c.Hybrid.OutputGate {
		a.qraw = cols(h.qg, t*c.NumHeads, 2*hd, 0, hd)
		h.gate = cols(h.qg, t*c.NumHeads, 2*hd, hd, hd)
	}
	a.kraw, a.u[1] = r.linear(&ly.k, l, a.h1)
	a.v, a.u[2] = r.linear(&ly.v, l, a.h1)
	a.q = rmsNorm(a.qraw, ly.qNorm, c.RMSNormEps)
	a.k = rmsNorm(a.kraw, ly.kNorm, c.RMSNormEps)
	r.rope.apply(a.q, c.NumHeads, 1)
	r.rope.apply(a.k, c.NumKVHeads, 1)
	a.ao, a.lse = r.attn.forward(a.q, a.k, a.v)
	h.gated = a.ao
	if h.gate != nil {
		h.gated = make([]float32, len(a.ao))
		for i, v := range a.ao {
			h.gated[i] = v * sigmoid(h.gate[i])
		}
	}
	o, uo := r.linear(&ly.o, l, h.gated)
	a.u[3] = uo
	return o
}

func (r *run) gatedAttnBackward(l int, a *acts, dx1 []float32) []float32 {
	ly := &r.b.layers[l]
	c := r.b.cfg
	h, t, hd := a.hy, r.t, c.HeadDim
	dgated := make([]float32, len(h.gated))
	r.linearBack(&ly.o, l, h.gated, a.u[3], dx1, dgated, true)
	dao, dgate := dgated, []float32(nil)
	if h.gate != nil {
		dao, dgate = make([]float32, len(dgated)), make([]float32, len(dgated))
		for i, g := range dgated {
			s := sigmoid(h.gate[i])
			dao[i] = g * s
			dgate[i] = g * a.ao[i] * s * (1 - s)
		}
	}
	dq, dk, dv := r.attn.backward(a.q, a.k, a.v, a.ao, a.lse, dao)
	r.rope.apply(dq, c.NumHeads, -1)
	r.rope.apply(dk, c.NumKVHeads, -1)
	dq = rmsNormBack(a.qraw, ly.qNorm, dq, c.RMSNormEps, nil)
	dk = rmsNormBack(a.kraw, ly.kNorm, dk, c.RMSNormEps, nil)
	dqg := dq
	if h.gate != nil {
		dqg = make([]float32, len(h.qg))
		uncols(dqg, dq, t*c.NumHeads, 2*hd, 0, hd)
		uncols(dqg, dgate, t*c.NumHeads, 2*hd, hd, hd)
	}
	dh1 := make([]float32, len(a.h1))
	r.linearBack(&ly.q, l, a.h1, a.u[0], dqg, dh1, true)
	r.linearBack(&ly.k, l, a.h1, a.u[1], dk, dh1, false)
	r.linearBack(&ly.v, l, a.h1, a.u[2], dv, dh1, false)
	return dh1
}

func (r *run) gdnShape() GDN {
	h := r.b.cfg.Hybrid
	return GDN{T: r.t, KeyHeads: h.KeyHeads, ValueHeads: h.ValueHeads, KeyDim: h.KeyDim, ValueDim: h.ValueDim,
		Scale: float32(1 / math.Sqrt(float64(h.KeyDim)))}
}

// deltaNetForward: in_proj_qkv → causal conv + SiLU → L2-normed q, k, and v →
// chunked gated delta rule → gated RMSNorm with in_proj_z → out_proj.
func (r *run) deltaNetForward(l int, a *acts) []float32 {
	ly := &r.b.layers[l]
	c := r.b.cfg
	hc, h, t := c.Hybrid, a.hy, r.t
	kw, vw, cd := hc.LinearKeyWidth(), hc.LinearValueWidth(), hc.ConvDim()
	h.qkv, h.uqkv = r.linear(&ly.hy.qkv, l, a.h1)
	h.z, h.uz = r.linear(&ly.hy.z, l, a.h1)
	h.braw, _ = r.linear(&ly.hy.bproj, l, a.h1)
	h.araw, _ = r.linear(&ly.hy.aproj, l, a.h1)
	var cv []float32
	h.pre, cv = convSiLU(h.qkv, ly.hy.conv, nil, t, cd, hc.ConvKernel)
	h.q0, h.k0, h.v = cols(cv, t, cd, 0, kw), cols(cv, t, cd, kw, kw), cols(cv, t, cd, 2*kw, vw)
	h.q, h.k = l2Rows(h.q0, hc.KeyDim), l2Rows(h.k0, hc.KeyDim)
	h.g, h.beta = gdnGates(h.araw, h.braw, ly.hy.aLog, ly.hy.dtBias)
	h.o, _, h.entry = r.gdnShape().Forward(h.q, h.k, h.v, h.g, h.beta, nil)
	h.y = gatedNorm(h.o, h.z, ly.hy.gateNorm, c.RMSNormEps)
	out, uo := r.linear(&ly.hy.out, l, h.y)
	h.uout = uo
	return out
}

func (r *run) deltaNetBackward(l int, a *acts, dx1 []float32) []float32 {
	ly := &r.b.layers[l]
	c := r.b.cfg
	hc, h, t := c.Hybrid, a.hy, r.t
	kw, vw, cd := hc.LinearKeyWidth(), hc.LinearValueWidth(), hc.ConvDim()
	dy := make([]float32, len(h.y))
	r.linearBack(&ly.hy.out, l, h.y, h.uout, dx1, dy, true)
	do, dz := gatedNormBack(h.o, h.z, ly.hy.gateNorm, dy, c.RMSNormEps)
	gr := r.gdnShape().Backward(h.q, h.k, h.v, h.g, h.beta, h.entry, do, nil)
	dcv := make([]float32, t*cd)
	uncols(dcv, l2RowsBack(h.q0, gr.Q, hc.KeyDim), t, cd, 0, kw)
	uncols(dcv, l2RowsBack(h.k0, gr.K, hc.KeyDim), t, cd, kw, kw)
	uncols(dcv, gr.V, t, cd, 2*kw, vw)
	dqkv := convSiLUBack(h.pre, dcv, ly.hy.conv, t, cd, hc.ConvKernel)
	nv := hc.ValueHeads
	da, db := make([]float32, len(h.araw)), make([]float32, len(h.braw))
	for i := range da {
		hh := i % nv
		da[i] = gr.G[i] * float32(-math.Exp(float64(ly.hy.aLog[hh]))) * sigmoid(h.araw[i]+ly.hy.dtBias[hh])
		db[i] = gr.Beta[i] * h.beta[i] * (1 - h.beta[i])
	}
	dh1 := make([]float32, len(a.h1))
	r.linearBack(&ly.hy.qkv, l, a.h1, h.uqkv, dqkv, dh1, true)
	r.linearBack(&ly.hy.z, l, a.h1, h.uz, dz, dh1, false)
	r.linearBack(&ly.hy.bproj, l, a.h1, nil, db, dh1, false)
	r.linearBack(&ly.hy.aproj, l, a.h1, nil, da, dh1, false)
	return dh1
}
