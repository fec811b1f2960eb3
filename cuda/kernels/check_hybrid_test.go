//go:build masscuda || masscudaemu

package kernels

import (
	"errors"
	"math"
	"testing"

	"github.com/mass-dev/mass/cuda"
	"github.com/mass-dev/mass/errclass"
)

func randF32(n int, f func() float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(f())
	}
	return v
}

// TestHybridConvNorm checks the hybrid's conv + SiLU (with and without a history state)
// and gated RMSNorm launchers against the Go references, at a Qwen3.6-like head size.
func TestHybridConvNorm(t *testing.T) {
	r := rng(t)
	const n, c, k, heads, dv = 100, 96, 4, 4, 128
	x, w := randBF16(r, n*c, 1), randF32(c*k, func() float64 { return 0.5 * r.NormFloat64() })
	st, dy := randF32((k-1)*c, r.NormFloat64), randF32(n*c, r.NormFloat64)
	xo, z := randF32(n*heads*dv, r.NormFloat64), randBF16(r, n*heads*dv, 1.5)
	nw, dyn := randF32(dv, r.NormFloat64), randBF16(r, n*heads*dv, 1)
	wantN, wantR := cuda.GatedRMSNorm(xo, z, nw, dv, 1e-6)
	wantDX, wantDZ := cuda.GatedRMSNormBackward(dyn, xo, z, nw, dv, 1e-6)
	run(t, func(e *env) {
		xm, wm := e.bf16(x), e.f32(w)
		for _, state := range [][]float32{nil, st} {
			wantY, pre := cuda.CausalConvSiLU(x, w, state, n, c, k)
			wantD := cuda.CausalConvSiLUBackward(dy, pre, w, n, c, k)
			var sm P
			if state != nil {
				sm = e.f32(state)
			}
			y, dx := e.out(n*c, 4), e.out(n*c, 2)
			e.must(ops.CausalConvFwd(y, xm, wm, sm, n, c, k))
			e.must(ops.CausalConvBwd(dx, e.f32(dy), xm, wm, sm, n, c, k))
			e.check("causal_conv_silu_fwd", e.getF32(y, n*c), wantY, tf)
			e.check("causal_conv_silu_bwd", e.getBF16(dx, n*c), wantD, tb)
		}
		rows := n * heads
		y, rs, dx, dz := e.out(rows*dv, 2), e.out(rows, 4), e.out(rows*dv, 4), e.out(rows*dv, 2)
		xm2, zm, nwm := e.f32(xo), e.bf16(z), e.f32(nw)
		e.must(ops.GatedRMSNormFwd(y, rs, xm2, zm, nwm, rows, dv, 1e-6))
		e.must(ops.GatedRMSNormBwd(dx, dz, e.bf16(dyn), xm2, zm, nwm, rs, rows, dv))
		e.check("gated_rmsnorm_fwd", e.getBF16(y, rows*dv), wantN, tb)
		e.check("gated_rmsnorm_fwd rstd", e.getF32(rs, rows), wantR, tf)
		e.check("gated_rmsnorm_bwd dx", e.getF32(dx, rows*dv), wantDX, 1e-4)
		e.check("gated_rmsnorm_bwd dz", e.getBF16(dz, rows*dv), wantDZ, tb)
	})
}

// TestGDNLaunchers runs GDNFwd/GDNBwd (several chunks, a remainder, an initial state,
// grouped key heads) against the recurrent Go references.
func TestGDNLaunchers(t *testing.T) {
	r := rng(t)
	s := GDNShape{T: 45, NK: 2, NV: 4, DK: 16, DV: 8, C: 16, Scale: 0.25}
	unit := func(n int) []float32 {
		v := randF32(n, r.NormFloat64)
		for o := 0; o < n; o += s.DK {
			var ss float64
			for _, x := range v[o : o+s.DK] {
				ss += float64(x) * float64(x)
			}
			for i := o; i < o+s.DK; i++ {
				v[i] /= float32(math.Sqrt(ss))
			}
		}
		return v
	}
	q, k := unit(s.T*s.NK*s.DK), unit(s.T*s.NK*s.DK)
	v := randF32(s.T*s.NV*s.DV, r.NormFloat64)
	g := randF32(s.T*s.NV, func() float64 { return -0.4 * r.Float64() })
	beta := randF32(s.T*s.NV, r.Float64)
	s0 := randF32(s.NV*s.DK*s.DV, func() float64 { return 0.5 * r.NormFloat64() })
	wo, ws := cuda.GatedDeltaRule(q, k, v, g, beta, s0, s.T, s.NK, s.NV, s.DK, s.DV, s.Scale)
	do, dsT := randF32(len(wo), r.NormFloat64), randF32(len(ws), r.NormFloat64)
	want := cuda.GatedDeltaRuleBackward(q, k, v, g, beta, s0, do, dsT, s.T, s.NK, s.NV, s.DK, s.DV, s.Scale)
	run(t, func(e *env) {
		qm, km, vm, gm, bm, s0m := e.f32(q), e.f32(k), e.f32(v), e.f32(g), e.f32(beta), e.f32(s0)
		o, so, entry := e.out(len(wo), 4), e.out(len(ws), 4), e.out(s.EntryFloats(), 4)
		e.must(ops.GDNFwd(o, so, entry, qm, km, vm, gm, bm, s0m, e.out(s.FwdWorkFloats(), 4), s))
		e.check("gdn o", e.getF32(o, len(wo)), wo, 1e-4)
		e.check("gdn final state", e.getF32(so, len(ws)), ws, 1e-4)
		gr := GDNGrads{DQ: e.out(len(q), 4), DK: e.out(len(k), 4), DV: e.out(len(v), 4), DG: e.out(len(g), 4),
			DBeta: e.out(len(beta), 4), DS0: e.out(len(ws), 4)}
		e.must(ops.GDNBwd(gr, qm, km, vm, gm, bm, entry, e.f32(do), e.f32(dsT), e.out(s.BwdWorkFloats(), 4), s))
		for _, c := range []struct {
			name string
			p    P
			want []float32
		}{{"gdn dq", gr.DQ, want.Q}, {"gdn dk", gr.DK, want.K}, {"gdn dv", gr.DV, want.V}, {"gdn dg", gr.DG, want.G},
			{"gdn dbeta", gr.DBeta, want.Beta}, {"gdn ds0", gr.DS0, want.S0}} {
			e.check(c.name, e.getF32(c.p, len(c.want)), c.want, 2e-4)
		}
	})
	if err := (GDNShape{T: 4, NK: 3, NV: 4, DK: 8, DV: 8, C: 16}).check(); !errors.Is(err, errclass.ErrInvalid) {
		t.Error("value heads not a multiple of key heads accepted")
	}
}

// TestGDNPrepAttnGate checks the q/k L2 norm (strided columns of a conv output), the gates
// and the attention output gate against the Go references.
func TestGDNPrepAttnGate(t *testing.T) {
	r := rng(t)
	const tt, heads, n, stride, off = 40, 4, 32, 320, 64
	x := randF32(tt*stride, r.NormFloat64)
	g := randF32(tt*heads*n, r.NormFloat64)
	wantN, wantR := cuda.GDNL2Norm(x[off:], tt*heads, n, heads, stride)
	wantDX := make([]float32, len(x))
	cuda.GDNL2NormBackward(wantDX[off:], g, x[off:], tt*heads, n, heads, stride)
	const nv = 6
	a, b := randBF16(r, tt*nv, 2), randBF16(r, tt*nv, 2)
	aLog, dtb := randF32(nv, r.NormFloat64), randF32(nv, r.NormFloat64)
	dg, dbeta := randF32(tt*nv, r.NormFloat64), randF32(tt*nv, r.NormFloat64)
	wantG, wantB := cuda.GDNGates(a, b, aLog, dtb)
	wantDA, wantDB := cuda.GDNGatesBackward(dg, dbeta, a, b, aLog, dtb)
	const hq, hd = 3, 16
	o, qg, dy := randBF16(r, tt*hq*hd, 1), randBF16(r, tt*hq*2*hd, 2), randBF16(r, tt*hq*hd, 1)
	wantY := cuda.AttnGate(o, qg, hd)
	wantDQG := make([]float32, len(qg))
	wantDO := cuda.AttnGateBackward(dy, o, qg, wantDQG, hd)
	run(t, func(e *env) {
		xm := e.f32(x)
		out, ri := e.out(tt*heads*n, 4), e.out(tt*heads, 4)
		dx := e.f32(make([]float32, len(x))) // zero: the kernel writes only q's columns
		e.must(ops.GDNL2NormFwd(out, ri, xm+off*4, tt*heads, n, heads, stride))
		e.must(ops.GDNL2NormBwd(dx+off*4, e.f32(g), xm+off*4, ri, tt*heads, n, heads, stride))
		e.check("gdn_l2norm_fwd", e.getF32(out, tt*heads*n), wantN, tf)
		e.check("gdn_l2norm_fwd rinv", e.getF32(ri, tt*heads), wantR, tf)
		e.check("gdn_l2norm_bwd", e.getF32(dx, len(x)), wantDX, 1e-4)

		am, gm, bm := e.bf16(a), e.out(tt*nv, 4), e.out(tt*nv, 4)
		alm, dtm := e.f32(aLog), e.f32(dtb)
		e.must(ops.GDNGatesFwd(gm, bm, am, e.bf16(b), alm, dtm, tt*nv, nv))
		da, db := e.out(tt*nv, 2), e.out(tt*nv, 2)
		e.must(ops.GDNGatesBwd(da, db, e.f32(dg), e.f32(dbeta), am, bm, alm, dtm, tt*nv, nv))
		e.check("gdn_gates_fwd g", e.getF32(gm, tt*nv), wantG, tf)
		e.check("gdn_gates_fwd beta", e.getF32(bm, tt*nv), wantB, tf)
		e.check("gdn_gates_bwd da", e.getBF16(da, tt*nv), wantDA, tb)
		e.check("gdn_gates_bwd db", e.getBF16(db, tt*nv), wantDB, tb)

		om, qm := e.bf16(o), e.bf16(qg)
		y, do := e.out(len(o), 2), e.out(len(o), 2)
		dqg := e.bf16(make([]float32, len(qg))) // the query half must stay zero
		e.must(ops.AttnGateFwd(y, om, qm, len(o), hd))
		e.must(ops.AttnGateBwd(do, dqg, e.bf16(dy), om, qm, len(o), hd))
		e.check("attn_gate_fwd", e.getBF16(y, len(o)), wantY, tb)
		e.check("attn_gate_bwd do", e.getBF16(do, len(o)), wantDO, tb)
		e.check("attn_gate_bwd dgate", e.getBF16(dqg, len(qg)), wantDQG, tb)
	})
}

// TestPartialRoPE checks the hybrid's q/k norm with RoPE on a quarter of head_dim (the
// 27B's 64 of 256), q read from the query half of a gated q_proj output.
func TestPartialRoPE(t *testing.T) {
	r := rng(t)
	const tt, h, hd, rot, stride = 9, 3, 256, 64, 2 * 256
	pos := make([]int32, tt)
	for i := range pos {
		pos[i] = int32(3 * i)
	}
	x, w, dout := randBF16(r, tt*h*stride, 1), randBF16(r, hd, 1), randBF16(r, tt*h*hd, 1)
	want, wantR := cuda.QKNormPartialRoPE(x, w, pos, h, hd, rot, stride, 1e-6, 1e7)
	wantDX := make([]float32, len(x))
	cuda.QKNormPartialRoPEBackward(wantDX, dout, x, wantR, w, pos, h, hd, rot, stride, 1e7)
	run(t, func(e *env) {
		xm, wm, pm := e.bf16(x), e.bf16(w), e.i32(pos)
		out, rs := e.out(tt*h*hd, 2), e.out(tt*h, 4)
		dx := e.bf16(make([]float32, len(x))) // the gate halves must stay zero
		e.must(ops.QKNormPartialRoPEFwd(out, rs, xm, wm, pm, tt, h, hd, rot, stride, 1e-6, 1e7))
		e.must(ops.QKNormPartialRoPEBwd(dx, e.bf16(dout), xm, rs, wm, pm, tt, h, hd, rot, stride, 1e7))
		e.check("qk_norm_prope_fwd", e.getBF16(out, tt*h*hd), want, tb)
		e.check("qk_norm_prope_fwd rstd", e.getF32(rs, tt*h), wantR, tf)
		e.check("qk_norm_prope_bwd", e.getBF16(dx, len(x)), wantDX, tb)
	})
	if err := ops.QKNormPartialRoPEFwd(0, 0, 0, 0, 0, 1, 1, 16, 5, 16, 1e-6, 1e4); !errors.Is(err, errclass.ErrInvalid) {
		t.Error("odd rotary dims accepted")
	}
}
