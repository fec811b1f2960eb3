package fast

// layerForward runs decoder layer l on the residual x [t, D].
func (r *run) layerForward(l int, x []float32) *acts {
	ly := &r.b.layers[l]
	if ly.hy != nil {
		return r.hybridForward(l, x)
	}
	c := r.b.cfg
	a := &acts{xin: x}
	a.h1 = rmsNorm(x, ly.inNorm, c.RMSNormEps)
	a.q, a.u[0] = r.linear(&ly.q, l, a.h1)
	a.k, a.u[1] = r.linear(&ly.k, l, a.h1)
	a.v, a.u[2] = r.linear(&ly.v, l, a.h1)
	if ly.qNorm != nil {
		a.qraw, a.kraw = a.q, a.k
		a.q = rmsNorm(a.qraw, ly.qNorm, c.RMSNormEps)
		a.k = rmsNorm(a.kraw, ly.kNorm, c.RMSNormEps)
	}
	r.rope.apply(a.q, c.NumHeads, 1)
	r.rope.apply(a.k, c.NumKVHeads, 1)
	a.ao, a.lse = r.attn.forward(a.q, a.k, a.v)
	o, uo := r.linear(&ly.o, l, a.ao)
	a.u[3] = uo
	a.x1 = o
	addInto(a.x1, x)
	r.mlpForward(l, a)
	return a
}

// mlpForward is x2 = x1 + down(silu(gate(h2))·up(h2)), h2 = norm(x1); without
// gradients it keeps x2 only.
func (r *run) mlpForward(l int, a *acts) {
	ly := &r.b.layers[l]
	a.h2 = rmsNorm(a.x1, ly.postNorm, r.b.cfg.RMSNormEps)
	a.g, a.u[4] = r.linear(&ly.gate, l, a.h2)
	a.up, a.u[5] = r.linear(&ly.up, l, a.h2)
	act := siluMul(a.g, a.up)
	down, ud := r.linear(&ly.down, l, act)
	a.u[6] = ud
	addInto(down, a.x1)
	a.x2 = down
	if !r.opts.grad {
		*a = acts{x2: a.x2}
	}
}

// mlpBackward returns dLoss/dx1 given dLoss/dx2.
func (r *run) mlpBackward(l int, a *acts, dx2 []float32) []float32 {
	ly := &r.b.layers[l]
	act := siluMul(a.g, a.up)
	dact := make([]float32, len(act))
	r.linearBack(&ly.down, l, act, a.u[6], dx2, dact, true)
	dg, du := siluMulBack(a.g, a.up, dact)
	dh2 := make([]float32, len(a.h2))
	r.linearBack(&ly.gate, l, a.h2, a.u[4], dg, dh2, true)
	r.linearBack(&ly.up, l, a.h2, a.u[5], du, dh2, false)
	return rmsNormBack(a.x1, ly.postNorm, dh2, r.b.cfg.RMSNormEps, dx2)
}

// layerBackward takes the gradient of layer l's output and returns the
// gradient of its input, adding the LoRA gradients on the way.
func (r *run) layerBackward(l int, a *acts, dx2 []float32) []float32 {
	ly := &r.b.layers[l]
	if ly.hy != nil {
		return r.hybridBackward(l, a, dx2)
	}
	c := r.b.cfg
	dx1 := r.mlpBackward(l, a, dx2)
	// Attention: x1 = xin + o(attn(rope(q), rope(k), v)).
	dao := make([]float32, len(a.ao))
	r.linearBack(&ly.o, l, a.ao, a.u[3], dx1, dao, true)
	dq, dk, dv := r.attn.backward(a.q, a.k, a.v, a.ao, a.lse, dao)
	r.rope.apply(dq, c.NumHeads, -1)
	r.rope.apply(dk, c.NumKVHeads, -1)
	if ly.qNorm != nil {
		dq = rmsNormBack(a.qraw, ly.qNorm, dq, c.RMSNormEps, nil)
		dk = rmsNormBack(a.kraw, ly.kNorm, dk, c.RMSNormEps, nil)
	}
	dh1 := make([]float32, len(a.h1))
	r.linearBack(&ly.q, l, a.h1, a.u[0], dq, dh1, true)
	r.linearBack(&ly.k, l, a.h1, a.u[1], dk, dh1, false)
	r.linearBack(&ly.v, l, a.h1, a.u[2], dv, dh1, false)
	return rmsNormBack(a.xin, ly.inNorm, dh1, c.RMSNormEps, dx1)
}

func addInto(dst, src []float32) {
	parallelRows(len(dst), func(r0, r1 int) {
		for i := r0; i < r1; i++ {
			dst[i] += src[i]
		}
	})
}
