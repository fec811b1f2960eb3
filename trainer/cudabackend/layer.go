//go:build masscuda || masscudaemu

package cudabackend

import (
	"fmt"

	"github.com/mass-dev/mass/cuda"
	"github.com/mass-dev/mass/cuda/cublaslt"
	"github.com/mass-dev/mass/cuda/kernels"
	"github.com/mass-dev/mass/trainer/lora"
)

// acts are one layer's saved activations (bf16 unless noted).
type acts struct {
	r, rstd1, a      uintptr // layer input stream, its rstd (f32), normed input
	qp, kp, qrs, krs uintptr // q/k before norm+RoPE, their rstd (f32); Qwen3 only
	q, k, v, o, lse  uintptr // attention inputs, output, lse (f32, flash and tc paths)
	r2, rstd2, m     uintptr // stream after attention, its rstd (f32), normed
	gate, up, h      uintptr
	xa               [nMods]uintptr // drop(x)·Aᵀ per module (ungrouped)
	xaG              [2]uintptr     // x·[A…]ᵀ of the q/k/v and gate/up groups (grouped)
	attnOut, mlpOut  uintptr
	y                uintptr  // gated attention: σ(gate)·o, o_proj's input (bf16)
	gd               *gdnActs // Gated DeltaNet layers
}

// fwd holds one window's forward state.
type fwd struct {
	b         *Backend
	sc        *scope
	T         int
	ro        runOpts
	ids, pos  uintptr
	tg        uintptr
	layers    []acts
	final     uintptr   // final-normed hidden states
	rl, rstdF uintptr   // final stream and its rstd
	ckpt      []uintptr // activation checkpointing: each layer's input stream (bf16), else nil
	lsc       []*scope  // activation checkpointing: the scope of each live layer's activations
}

func gemmLogits(t, v, d int, x, head, out uintptr) cublaslt.Gemm {
	return cublaslt.Gemm{TransB: true, M: t, N: v, K: d, A: x, B: head, C: out, CType: cublaslt.F32, Alpha: 1}
}

func (f *fwd) shape() cuda.AttnShape {
	c := f.b.cfg
	return cuda.AttnShape{T: f.T, QHeads: c.NumHeads, KVHeads: c.NumKVHeads, HeadDim: c.HeadDim}
}

func (f *fwd) lin(l, mi int) linear {
	c, lw := f.b.cfg, f.b.w.layers[l]
	in, out := lora.Dims(c, allMods[mi])
	ln := linear{T: f.T, in: in, out: out, w: lw.proj[mi].Ptr, bias: lw.bias[mi].Ptr, lo: lw.lo[mi]}
	if f.ro.train && f.b.w.dropout > 0 {
		ln.dropout = f.b.w.dropout
		ln.seed = uint32(mix(f.ro.seed, uint64(l*16+mi)))
	}
	return ln
}

// forward runs every layer of a one-stage backend and the final norm.
func (f *fwd) forward() error {
	emb, err := f.embed()
	if err != nil {
		return err
	}
	xAdd, resid, err := f.layersFwd(emb, 0)
	if err != nil {
		return err
	}
	return f.finalNorm(xAdd, resid)
}

// embed looks the window's ids up (first stage).
func (f *fwd) embed() (uintptr, error) {
	c := f.b.cfg
	emb, err := f.sc.bf16(f.T * c.HiddenSize)
	if err != nil {
		return 0, err
	}
	return emb, f.b.ops.Embedding(emb, f.b.w.embed.Ptr, f.ids, f.T, c.HiddenSize, c.VocabSize)
}

// layersFwd runs the stage's layers on the stream xAdd + resid (resid 0 before layer 0)
// and returns the pair the next layer (or stage, or final norm) takes.
func (f *fwd) layersFwd(xAdd, resid uintptr) (uintptr, uintptr, error) {
	f.layers = make([]acts, f.b.cfg.NumLayers)
	if f.b.checkpointing(f.T) && f.ro.train {
		return f.layersFwdCkpt(xAdd, resid)
	}
	var err error
	for l := f.b.lo; l < f.b.hi; l++ {
		if xAdd, resid, err = f.layerFwd(l, xAdd, resid); err != nil {
			return 0, 0, fmt.Errorf("layer %d: %w", l, err)
		}
	}
	return xAdd, resid, nil
}

// finalNorm normalizes the last layer's stream into f.final (last stage).
func (f *fwd) finalNorm(xAdd, resid uintptr) error {
	b, c, o, sc := f.b, f.b.cfg, f.b.ops, f.sc
	t, d, eps := f.T, c.HiddenSize, float32(c.RMSNormEps)
	var err error
	for _, p := range []*uintptr{&f.final, &f.rl} {
		if *p, err = sc.bf16(t * d); err != nil {
			return err
		}
	}
	if f.rstdF, err = sc.f32(t); err != nil {
		return err
	}
	return o.RMSNormFwd(f.final, f.rl, f.rstdF, xAdd, resid, b.w.finalNorm.Ptr, t, d, eps)
}

// actBuf is one saved activation to allocate: n elements, bf16 or fp32.
type actBuf struct {
	dst *uintptr
	n   int
	f32 bool
}

// allocActs allocates layer l's saved activations (but the Gated DeltaNet's) in the
// window's scope.
func (f *fwd) allocActs(a *acts, l int) error {
	c := f.b.cfg
	t, d, q, kv, ff := f.T, c.HiddenSize, c.NumHeads*c.HeadDim, c.NumKVHeads*c.HeadDim, c.IntermediateSize
	bufs := []actBuf{{&a.rstd1, t, true}, {&a.a, t * d, false}, {&a.r2, t * d, false},
		{&a.rstd2, t, true}, {&a.m, t * d, false}, {&a.gate, t * ff, false}, {&a.up, t * ff, false},
		{&a.h, t * ff, false}, {&a.attnOut, t * d, false}, {&a.mlpOut, t * d, false}}
	if c.IsLinear(l) {
		return f.allocBufs(bufs)
	}
	bufs = append(bufs, actBuf{&a.q, t * q, false}, actBuf{&a.k, t * kv, false},
		actBuf{&a.v, t * kv, false}, actBuf{&a.o, t * q, false}, actBuf{&a.lse, c.NumHeads * t, true})
	// Plain RoPE (Qwen2) rotates the projections in place and its backward needs no saved
	// input; Qwen3's q/k norm keeps the projections and their rstd for its backward, and so
	// does the hybrid's gated attention (q_proj's output holds query and gate).
	if f.b.w.qkNorm || f.b.w.hybrid {
		bufs = append(bufs, actBuf{&a.qp, t * c.QProjOut(), false}, actBuf{&a.kp, t * kv, false},
			actBuf{&a.qrs, t * c.NumHeads, true}, actBuf{&a.krs, t * c.NumKVHeads, true})
	}
	if f.b.w.hybrid {
		bufs = append(bufs, actBuf{&a.y, t * q, false})
	}
	return f.allocBufs(bufs)
}

// allocBufs allocates bufs in the window's scope.
func (f *fwd) allocBufs(bufs []actBuf) error {
	sc := f.sc
	for _, p := range bufs {
		var err error
		if p.f32 {
			*p.dst, err = sc.f32(p.n)
		} else {
			*p.dst, err = sc.bf16(p.n)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// qkFwd applies Qwen3's q/k RMSNorm and RoPE (from the saved projections) or Qwen2's plain
// RoPE (in place).
func (f *fwd) qkFwd(a *acts, lw layerW) error {
	c, o := f.b.cfg, f.b.ops
	t, eps, theta := f.T, float32(c.RMSNormEps), float32(c.RopeTheta)
	if f.b.w.qkNorm {
		if err := o.QKNormRoPEFwd(a.q, a.qrs, a.qp, lw.qNorm.Ptr, f.pos, t, c.NumHeads, c.HeadDim, eps, theta); err != nil {
			return err
		}
		return o.QKNormRoPEFwd(a.k, a.krs, a.kp, lw.kNorm.Ptr, f.pos, t, c.NumKVHeads, c.HeadDim, eps, theta)
	}
	if err := o.RoPEFwd(a.q, a.q, f.pos, t, c.NumHeads, c.HeadDim, theta); err != nil {
		return err
	}
	return o.RoPEFwd(a.k, a.k, f.pos, t, c.NumKVHeads, c.HeadDim, theta)
}

// layerFwd runs decoder layer l on the stream xAdd + resid (resid 0 for the first layer)
// and returns the next layer's pair.
func (f *fwd) layerFwd(l int, xAdd, resid uintptr) (uintptr, uintptr, error) {
	b, c, o, sc := f.b, f.b.cfg, f.b.ops, f.sc
	t, d, ff := f.T, c.HiddenSize, c.IntermediateSize
	eps := float32(c.RMSNormEps)
	var err error
	a := &f.layers[l]
	lw := b.w.layers[l]
	tmp := &scope{x: sc.x}
	defer tmp.release()
	if err := f.allocActs(a, l); err != nil {
		return 0, 0, err
	}
	a.r = xAdd
	if resid != 0 {
		if a.r, err = sc.bf16(t * d); err != nil {
			return 0, 0, err
		}
	}
	if err := o.RMSNormFwd(a.a, a.r, a.rstd1, xAdd, resid, lw.inNorm.Ptr, t, d, eps); err != nil {
		return 0, 0, err
	}
	if err := f.mixerFwd(tmp, l, a, lw); err != nil {
		return 0, 0, err
	}
	if err := o.RMSNormFwd(a.m, a.r2, a.rstd2, a.attnOut, a.r, lw.postNorm.Ptr, t, d, eps); err != nil {
		return 0, 0, err
	}
	if err := f.projFwd(sc, tmp, lw.gateUp, l, gateUpMods, []uintptr{a.gate, a.up}, a.m, a, 1); err != nil {
		return 0, 0, err
	}
	if err := o.SwiGLUFwd(a.h, a.gate, a.up, t*ff); err != nil {
		return 0, 0, err
	}
	if a.xa[mDown], err = b.linFwd(sc, tmp, f.lin(l, mDown), a.mlpOut, a.h); err != nil {
		return 0, 0, err
	}
	return a.mlpOut, a.r2, nil
}

// mixerFwd runs layer l's token mixer on a.a into a.attnOut: Qwen2/Qwen3 attention, or
// the hybrid's gated attention or Gated DeltaNet.
func (f *fwd) mixerFwd(tmp *scope, l int, a *acts, lw layerW) error {
	switch {
	case lw.hy != nil && lw.hy.linear:
		return f.deltaNetFwd(tmp, l, a, lw)
	case lw.hy != nil:
		return f.gatedAttnFwd(tmp, l, a, lw)
	}
	b, sc := f.b, f.sc
	qp, kp := a.q, a.k
	if b.w.qkNorm {
		qp, kp = a.qp, a.kp
	}
	if err := f.projFwd(sc, tmp, lw.qkv, l, qkvMods, []uintptr{qp, kp, a.v}, a.a, a, 0); err != nil {
		return err
	}
	if err := f.qkFwd(a, lw); err != nil {
		return err
	}
	if err := f.attnFwd(tmp, a); err != nil {
		return err
	}
	var err error
	a.xa[mO], err = b.linFwd(sc, tmp, f.lin(l, mO), a.attnOut, a.o)
	return err
}

// mixerBwd is mixerFwd's backward: from dOut (the gradient at a.attnOut) it writes da, the
// gradient at a.a, and adds the mixer's LoRA gradients.
func (f *fwd) mixerBwd(tmp *scope, l int, a *acts, lw layerW, dOut, da uintptr) error {
	switch {
	case lw.hy != nil && lw.hy.linear:
		return f.deltaNetBwd(tmp, l, a, lw, dOut, da)
	case lw.hy != nil:
		return f.gatedAttnBwd(tmp, l, a, lw, dOut, da)
	}
	b, c, o := f.b, f.b.cfg, f.b.ops
	t, q, kv := f.T, c.NumHeads*c.HeadDim, c.NumKVHeads*c.HeadDim
	var err error
	buf := func(n int) uintptr {
		p, e := tmp.bf16(n)
		if e != nil && err == nil {
			err = e
		}
		return p
	}
	do, dq, dk, dv, dqp, dkp := buf(t*q), buf(t*q), buf(t*kv), buf(t*kv), buf(t*q), buf(t*kv)
	if err != nil {
		return err
	}
	theta := float32(c.RopeTheta)
	steps := []func() error{
		func() error { return b.linBwd(tmp, f.lin(l, mO), do, false, dOut, a.o, a.xa[mO]) },
		func() error { return f.attnBwd(tmp, a, kernels.AttnGrads{DO: do, DQ: dq, DK: dk, DV: dv}) },
		func() error {
			if !b.w.qkNorm {
				return o.RoPEBwd(dqp, dq, f.pos, t, c.NumHeads, c.HeadDim, theta)
			}
			return o.QKNormRoPEBwd(dqp, dq, a.qp, a.qrs, lw.qNorm.Ptr, f.pos, t, c.NumHeads, c.HeadDim, theta)
		},
		func() error {
			if !b.w.qkNorm {
				return o.RoPEBwd(dkp, dk, f.pos, t, c.NumKVHeads, c.HeadDim, theta)
			}
			return o.QKNormRoPEBwd(dkp, dk, a.kp, a.krs, lw.kNorm.Ptr, f.pos, t, c.NumKVHeads, c.HeadDim, theta)
		},
		func() error { return f.projBwd(tmp, lw.qkv, l, qkvMods, da, []uintptr{dqp, dkp, dv}, a.a, a, 0) },
	}
	return runSteps(steps)
}

func runSteps(steps []func() error) error {
	for _, s := range steps {
		if err := s(); err != nil {
			return err
		}
	}
	return nil
}

// attnFwd runs the configured attention. The clear path's P is recomputed in the backward
// rather than kept, so its [Hq, T, T] buffers are scratch in tmp.
func (f *fwd) attnFwd(tmp *scope, a *acts) error {
	s := f.shape()
	bufs := kernels.AttnBufs{Q: a.q, K: a.k, V: a.v, O: a.o, LSE: a.lse}
	switch f.b.attnFor(f.T) {
	case AttnTC:
		return f.b.ops.TCFwd(bufs, s)
	case AttnFlash:
		return f.b.ops.FlashFwd(bufs, s)
	}
	sq := s.QHeads * s.T * s.T
	pb, err := tmp.bf16(sq)
	if err != nil {
		return err
	}
	sb, err := tmp.f32(sq)
	if err != nil {
		return err
	}
	return f.b.ops.AttnClearFwd(bufs, pb, sb, s)
}

func (f *fwd) attnBwd(tmp *scope, a *acts, g kernels.AttnGrads) error {
	s := f.shape()
	bufs := kernels.AttnBufs{Q: a.q, K: a.k, V: a.v, O: a.o, LSE: a.lse}
	switch f.b.attnFor(f.T) {
	case AttnTC:
		return f.b.ops.TCBwd(bufs, g, s)
	case AttnFlash:
		return f.b.ops.FlashBwd(bufs, g, s)
	}
	sq := s.QHeads * s.T * s.T
	pb, err := tmp.bf16(sq)
	if err != nil {
		return err
	}
	sb, err := tmp.f32(sq)
	if err != nil {
		return err
	}
	ds, err := tmp.bf16(sq)
	if err != nil {
		return err
	}
	ob, err := tmp.bf16(s.T * s.QHeads * s.HeadDim)
	if err != nil {
		return err
	}
	recompute := bufs
	recompute.O = ob
	if err := f.b.ops.AttnClearFwd(recompute, pb, sb, s); err != nil {
		return err
	}
	return f.b.ops.AttnClearBwd(bufs, g, pb, sb, ds, s)
}

// backward propagates dFinal (the LM head's gradient at the final-normed states) down the
// layers, accumulating LoRA gradients on the device.
func (f *fwd) backward(dFinal uintptr) error {
	gR, err := f.finalNormBwd(dFinal)
	if err != nil {
		return err
	}
	return f.layersBwd(gR)
}

// finalNormBwd returns the gradient at the last layer's output stream (in the window's
// scope).
func (f *fwd) finalNormBwd(dFinal uintptr) (uintptr, error) {
	b, c := f.b, f.b.cfg
	t, d := f.T, c.HiddenSize
	gR, err := f.sc.bf16(t * d)
	if err != nil {
		return 0, err
	}
	return gR, b.ops.RMSNormBwd(gR, dFinal, f.rl, f.rstdF, b.w.finalNorm.Ptr, 0, t, d)
}

// layersBwd propagates gR, the gradient at the stage's output stream, down the stage's
// layers; on return gR holds the gradient at the stage's input stream. With activation
// checkpointing each layer's forward is run again from its checkpoint first.
func (f *fwd) layersBwd(gR uintptr) error {
	for l := f.b.hi - 1; l >= f.b.lo; l-- {
		if f.ckpt != nil {
			if err := f.recompute(l); err != nil {
				return fmt.Errorf("layer %d recompute: %w", l, err)
			}
		}
		err := f.layerBwd(l, gR)
		if f.ckpt != nil {
			f.releaseLayer(l)
		}
		if err != nil {
			return fmt.Errorf("layer %d backward: %w", l, err)
		}
	}
	return nil
}

// layerBwd is layer l's backward: gR, the gradient at its output stream, becomes the
// gradient at its input stream.
func (f *fwd) layerBwd(l int, gR uintptr) error {
	b, c, o := f.b, f.b.cfg, f.b.ops
	t, d, ff := f.T, c.HiddenSize, c.IntermediateSize
	var err error
	a, lw := &f.layers[l], b.w.layers[l]
	tmp := &scope{x: f.sc.x}
	defer tmp.release()
	buf := func(n int) uintptr {
		p, e := tmp.bf16(n)
		if e != nil && err == nil {
			err = e
		}
		return p
	}
	dh, dgate, dup, dm, gR2 := buf(t*ff), buf(t*ff), buf(t*ff), buf(t*d), buf(t*d)
	da, gNext := buf(t*d), buf(t*d)
	if err != nil {
		return err
	}
	return runSteps([]func() error{
		func() error { return b.linBwd(tmp, f.lin(l, mDown), dh, false, gR, a.h, a.xa[mDown]) },
		func() error { return o.SwiGLUBwd(dgate, dup, dh, a.gate, a.up, t*ff) },
		func() error { return f.projBwd(tmp, lw.gateUp, l, gateUpMods, dm, []uintptr{dgate, dup}, a.m, a, 1) },
		func() error { return o.RMSNormBwd(gR2, dm, a.r2, a.rstd2, lw.postNorm.Ptr, gR, t, d) },
		func() error { return f.mixerBwd(tmp, l, a, lw, gR2, da) },
		func() error { return o.RMSNormBwd(gNext, da, a.r, a.rstd1, lw.inNorm.Ptr, gR2, t, d) },
		func() error { return f.sc.x.Copy(gR, gNext, int64(t*d*2)) },
	})
}
