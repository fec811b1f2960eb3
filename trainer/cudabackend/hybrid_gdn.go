//go:build masscuda || masscudaemu

package cudabackend

import (
	"math"

	"github.com/mass-dev/mass/cuda/kernels"
)

// gdnChunk is the Gated DeltaNet chunk length (flash-linear-attention's and trainer/fast's).
const gdnChunk = 64

// gdnActs are a Gated DeltaNet layer's saved activations.
type gdnActs struct {
	qkv, z, braw, araw uintptr // projections (bf16)
	cv                 uintptr // conv + SiLU output [T, ConvDim] (fp32)
	q, k, qr, kr       uintptr // L2-normed q, k [T, nk·dk] and their inverse norms (fp32)
	v, g, beta         uintptr // v [T, nv·dv], gates [T, nv] (fp32)
	entry, o, rstd     uintptr // per-chunk entry states, core output, gated-norm rstd (fp32)
	y                  uintptr // gated norm output, out_proj's input (bf16)
}

func (f *fwd) gdnShape() kernels.GDNShape {
	h := f.b.cfg.Hybrid
	return kernels.GDNShape{T: f.T, NK: h.KeyHeads, NV: h.ValueHeads, DK: h.KeyDim, DV: h.ValueDim, C: gdnChunk,
		Scale: float32(1 / math.Sqrt(float64(h.KeyDim)))}
}

// deltaNetFwd: in_proj_qkv → causal conv + SiLU → L2-normed q, k and v → chunked gated
// delta rule with g = −exp(A_log)·softplus(a + dt_bias), β = σ(b) → gated RMSNorm with
// in_proj_z → out_proj, into a.attnOut.
func (f *fwd) deltaNetFwd(tmp *scope, l int, a *acts, lw layerW) error {
	b, c, o, hy := f.b, f.b.cfg, f.b.ops, lw.hy
	h, t, d := c.Hybrid, f.T, c.HiddenSize
	kw, vw, cd, nv := h.LinearKeyWidth(), h.LinearValueWidth(), h.ConvDim(), h.ValueHeads
	s := f.gdnShape()
	g := &gdnActs{}
	a.gd = g
	bufs := []actBuf{{&g.qkv, t * cd, false}, {&g.z, t * vw, false}, {&g.braw, t * nv, false}, {&g.araw, t * nv, false},
		{&g.cv, t * cd, true}, {&g.q, t * kw, true}, {&g.k, t * kw, true}, {&g.qr, t * h.KeyHeads, true},
		{&g.kr, t * h.KeyHeads, true}, {&g.v, t * vw, true}, {&g.g, t * nv, true}, {&g.beta, t * nv, true},
		{&g.entry, s.EntryFloats(), true}, {&g.o, t * vw, true}, {&g.rstd, t * nv, true}, {&g.y, t * vw, false}}
	if err := f.allocBufs(bufs); err != nil {
		return err
	}
	work, err := tmp.f32(s.FwdWorkFloats())
	if err != nil {
		return err
	}
	sT, err := tmp.f32(nv * h.KeyDim * h.ValueDim)
	if err != nil {
		return err
	}
	steps := []func() error{
		func() (err error) { a.xa[mQKV], err = b.linFwd(f.sc, tmp, f.lin(l, mQKV), g.qkv, a.a); return },
		func() (err error) { a.xa[mZ], err = b.linFwd(f.sc, tmp, f.lin(l, mZ), g.z, a.a); return },
		func() error { return b.baseFwd(f.hybridLin(hy.bproj.Ptr, d, nv), g.braw, a.a) },
		func() error { return b.baseFwd(f.hybridLin(hy.aproj.Ptr, d, nv), g.araw, a.a) },
		func() error { return o.CausalConvFwd(g.cv, g.qkv, hy.conv.Ptr, 0, t, cd, h.ConvKernel) },
		func() error { return o.GDNL2NormFwd(g.q, g.qr, g.cv, t*h.KeyHeads, h.KeyDim, h.KeyHeads, cd) },
		func() error {
			return o.GDNL2NormFwd(g.k, g.kr, g.cv+uintptr(4*kw), t*h.KeyHeads, h.KeyDim, h.KeyHeads, cd)
		},
		func() error { return o.CopyColsF32(g.v, vw, g.cv+uintptr(8*kw), cd, t, vw) },
		func() error { return o.GDNGatesFwd(g.g, g.beta, g.araw, g.braw, hy.aLog.Ptr, hy.dtBias.Ptr, t*nv, nv) },
		func() error { return o.GDNFwd(g.o, sT, g.entry, g.q, g.k, g.v, g.g, g.beta, 0, work, s) },
		func() error {
			return o.GatedRMSNormFwd(g.y, g.rstd, g.o, g.z, hy.gnormW.Ptr, t*nv, h.ValueDim, float32(c.RMSNormEps))
		},
		func() (err error) { a.xa[mOutP], err = b.linFwd(f.sc, tmp, f.lin(l, mOutP), a.attnOut, g.y); return },
	}
	return runSteps(steps)
}

// deltaNetBwd is deltaNetFwd's backward from dOut into da.
func (f *fwd) deltaNetBwd(tmp *scope, l int, a *acts, lw layerW, dOut, da uintptr) error {
	b, c, o, hy, g := f.b, f.b.cfg, f.b.ops, lw.hy, a.gd
	h, t, d := c.Hybrid, f.T, c.HiddenSize
	kw, vw, cd, nv := h.LinearKeyWidth(), h.LinearValueWidth(), h.ConvDim(), h.ValueHeads
	s := f.gdnShape()
	var err error
	buf := func(n int, f32 bool) uintptr {
		size := 2
		if f32 {
			size = 4
		}
		p, e := tmp.alloc(n * size)
		if e != nil && err == nil {
			err = e
		}
		return p
	}
	dy, dz, dqkv, daRaw, dbRaw := buf(t*vw, false), buf(t*vw, false), buf(t*cd, false), buf(t*nv, false), buf(t*nv, false)
	do, dcv := buf(t*vw, true), buf(t*cd, true)
	gr := kernels.GDNGrads{DQ: buf(t*kw, true), DK: buf(t*kw, true), DV: buf(t*vw, true), DG: buf(t*nv, true),
		DBeta: buf(t*nv, true), DS0: buf(nv*h.KeyDim*h.ValueDim, true)}
	work := buf(s.BwdWorkFloats(), true)
	if err != nil {
		return err
	}
	steps := []func() error{
		func() error { return b.linBwd(tmp, f.lin(l, mOutP), dy, false, dOut, g.y, a.xa[mOutP]) },
		func() error { return o.GatedRMSNormBwd(do, dz, dy, g.o, g.z, hy.gnormW.Ptr, g.rstd, t*nv, h.ValueDim) },
		func() error { return o.GDNBwd(gr, g.q, g.k, g.v, g.g, g.beta, g.entry, do, 0, work, s) },
		func() error { return o.GDNL2NormBwd(dcv, gr.DQ, g.cv, g.qr, t*h.KeyHeads, h.KeyDim, h.KeyHeads, cd) },
		func() error {
			return o.GDNL2NormBwd(dcv+uintptr(4*kw), gr.DK, g.cv+uintptr(4*kw), g.kr, t*h.KeyHeads, h.KeyDim, h.KeyHeads, cd)
		},
		func() error { return o.CopyColsF32(dcv+uintptr(8*kw), cd, gr.DV, vw, t, vw) },
		func() error { return o.CausalConvBwd(dqkv, dcv, g.qkv, hy.conv.Ptr, 0, t, cd, h.ConvKernel) },
		func() error {
			return o.GDNGatesBwd(daRaw, dbRaw, gr.DG, gr.DBeta, g.araw, g.beta, hy.aLog.Ptr, hy.dtBias.Ptr, t*nv, nv)
		},
		func() error { return b.linBwd(tmp, f.lin(l, mQKV), da, false, dqkv, a.a, a.xa[mQKV]) },
		func() error { return b.linBwd(tmp, f.lin(l, mZ), da, true, dz, a.a, a.xa[mZ]) },
		func() error { return b.linBwd(tmp, f.hybridLin(hy.bproj.Ptr, d, nv), da, true, dbRaw, a.a, 0) },
		func() error { return b.linBwd(tmp, f.hybridLin(hy.aproj.Ptr, d, nv), da, true, daRaw, a.a, 0) },
	}
	return runSteps(steps)
}
