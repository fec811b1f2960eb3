//go:build masscuda || masscudaemu

package cudabackend

import (
	"github.com/mass-dev/mass/cuda/kernels"
)

// hybridLin is a projection of layer l without LoRA (the Gated DeltaNet's in_proj_b/a).
func (f *fwd) hybridLin(w uintptr, in, out int) linear {
	return linear{T: f.T, in: in, out: out, w: w}
}

// gatedAttnFwd is the hybrid's full-attention mixer: q_proj gives per head [query | gate]
// (a.qp), k_proj and v_proj as usual; (1 + w) q/k RMSNorm with RoPE on the first RotaryDim
// dims; causal grouped-query attention; y = o·σ(gate); o_proj.
func (f *fwd) gatedAttnFwd(tmp *scope, l int, a *acts, lw layerW) error {
	b, c, o := f.b, f.b.cfg, f.b.ops
	t, hd, rot := f.T, c.HeadDim, c.Hybrid.RotaryDim
	eps, theta := float32(c.RMSNormEps), float32(c.RopeTheta)
	if err := f.projFwd(f.sc, tmp, lw.qkv, l, qkvMods, []uintptr{a.qp, a.kp, a.v}, a.a, a, 0); err != nil {
		return err
	}
	if err := o.QKNormPartialRoPEFwd(a.q, a.qrs, a.qp, lw.qNorm.Ptr, f.pos, t, c.NumHeads, hd, rot, f.qStride(), eps, theta); err != nil {
		return err
	}
	if err := o.QKNormPartialRoPEFwd(a.k, a.krs, a.kp, lw.kNorm.Ptr, f.pos, t, c.NumKVHeads, hd, rot, hd, eps, theta); err != nil {
		return err
	}
	if err := f.attnFwd(tmp, a); err != nil {
		return err
	}
	n := t * c.NumHeads * hd
	if c.Hybrid.OutputGate {
		if err := o.AttnGateFwd(a.y, a.o, a.qp, n, hd); err != nil {
			return err
		}
	} else if err := f.sc.x.Copy(a.y, a.o, int64(2*n)); err != nil {
		return err
	}
	var err error
	a.xa[mO], err = b.linFwd(f.sc, tmp, f.lin(l, mO), a.attnOut, a.y)
	return err
}

// qStride is the distance of two query vectors in q_proj's output: 2·head_dim with the
// output gate between them.
func (f *fwd) qStride() int {
	if f.b.cfg.Hybrid.OutputGate {
		return 2 * f.b.cfg.HeadDim
	}
	return f.b.cfg.HeadDim
}

// gatedAttnBwd is gatedAttnFwd's backward from dOut into da.
func (f *fwd) gatedAttnBwd(tmp *scope, l int, a *acts, lw layerW, dOut, da uintptr) error {
	b, c, o := f.b, f.b.cfg, f.b.ops
	t, hd, rot, theta := f.T, c.HeadDim, c.Hybrid.RotaryDim, float32(c.RopeTheta)
	q, kv, n := c.QDim(), c.KVDim(), t*c.QDim()
	var err error
	buf := func(n int) uintptr {
		p, e := tmp.bf16(n)
		if e != nil && err == nil {
			err = e
		}
		return p
	}
	dy, dq, dk, dv, dqg, dkp := buf(t*q), buf(t*q), buf(t*kv), buf(t*kv), buf(t*c.QProjOut()), buf(t*kv)
	do := dy
	if c.Hybrid.OutputGate {
		do = buf(t * q)
	}
	if err != nil {
		return err
	}
	steps := []func() error{
		func() error { return b.linBwd(tmp, f.lin(l, mO), dy, false, dOut, a.y, a.xa[mO]) },
		func() error {
			if !c.Hybrid.OutputGate {
				return nil
			}
			return o.AttnGateBwd(do, dqg, dy, a.o, a.qp, n, hd)
		},
		func() error { return f.attnBwd(tmp, a, kernels.AttnGrads{DO: do, DQ: dq, DK: dk, DV: dv}) },
		func() error {
			return o.QKNormPartialRoPEBwd(dqg, dq, a.qp, a.qrs, lw.qNorm.Ptr, f.pos, t, c.NumHeads, hd, rot, f.qStride(), theta)
		},
		func() error {
			return o.QKNormPartialRoPEBwd(dkp, dk, a.kp, a.krs, lw.kNorm.Ptr, f.pos, t, c.NumKVHeads, hd, rot, hd, theta)
		},
		func() error { return f.projBwd(tmp, lw.qkv, l, qkvMods, da, []uintptr{dqg, dkp, dv}, a.a, a, 0) },
	}
	return runSteps(steps)
}
