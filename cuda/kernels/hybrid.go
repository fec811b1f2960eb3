//go:build masscuda || masscudaemu

package kernels

import (
	"github.com/mass-dev/mass/cuda"
	"github.com/mass-dev/mass/cuda/device"
)

// CausalConvFwd: y [T, C] fp32 = silu(depthwise causal conv of x [T, C] bf16 with w [C, K]
// fp32), rows before 0 from state [K−1, C] fp32 (0: zeros).
func (o *Ops) CausalConvFwd(y, x, w, state P, t, c, k int) error {
	return o.launchN("causal_conv_silu_fwd", t*c, ptr(y), ptr(x), ptr(w), ptr(state), i(t), i(c), i(k))
}

// CausalConvBwd: dx [T, C] bf16 of CausalConvFwd for dy [T, C] fp32.
func (o *Ops) CausalConvBwd(dx, dy, x, w, state P, t, c, k int) error {
	return o.launchN("causal_conv_silu_bwd", t*c, ptr(dx), ptr(dy), ptr(x), ptr(w), ptr(state), i(t), i(c), i(k))
}

// GatedRMSNormFwd: per row of n, y bf16 = x/rms(x)·w·silu(z), rstd [rows] saved; x fp32,
// z bf16, w fp32.
func (o *Ops) GatedRMSNormFwd(y, rstd, x, z, w P, nrows, n int, eps float32) error {
	return o.X.Launch("gated_rmsnorm_fwd", rows(min(nrows, 65535)), device.D1(rowBlock(n)), 0,
		ptr(y), ptr(rstd), ptr(x), ptr(z), ptr(w), i(nrows), i(n), f(eps))
}

// GatedRMSNormBwd: dx fp32 and dz bf16 of GatedRMSNormFwd for dy bf16.
func (o *Ops) GatedRMSNormBwd(dx, dz, dy, x, z, w, rstd P, nrows, n int) error {
	return o.X.Launch("gated_rmsnorm_bwd", rows(min(nrows, 65535)), device.D1(rowBlock(n)), 0,
		ptr(dx), ptr(dz), ptr(dy), ptr(x), ptr(z), ptr(w), ptr(rstd), i(nrows), i(n))
}

// GDNShape is one Gated DeltaNet call: T tokens, nk key heads of dk, nv value heads of dv
// (nv a multiple of nk), chunks of C tokens, query scale.
type GDNShape struct {
	T, NK, NV, DK, DV, C int
	Scale                float32
}

func (s GDNShape) check() error {
	if s.T <= 0 || s.NK <= 0 || s.NV%s.NK != 0 || s.DK <= 0 || s.DV <= 0 || s.C <= 0 {
		return invalid("gdn: shape %+v (want positive sizes, value heads a multiple of key heads)", s)
	}
	return nil
}

// EntryFloats is the size of the per-chunk entry states GDNFwd writes and GDNBwd reads.
func (s GDNShape) EntryFloats() int { return (s.T + s.C - 1) / s.C * s.NV * s.DK * s.DV }

// FwdWorkFloats and BwdWorkFloats are the scratch GDNFwd and GDNBwd need.
func (s GDNShape) FwdWorkFloats() int { return s.NV * cuda.GDNWorkFloats(s.C, s.DK, s.DV) }

// BwdWorkFloats is GDNBwd's scratch in floats.
func (s GDNShape) BwdWorkFloats() int { return s.NK * cuda.GDNBackWorkFloats(s.C, s.DK, s.DV) }

// GDNFwd runs gdn_chunk_fwd: o [T, nv·dv], the final state sOut [nv, dk, dv] and the entry
// states, from q, k [T, nk·dk], v, g, beta (fp32) and s0 (0: zeros); work is FwdWorkFloats.
func (o *Ops) GDNFwd(out, sOut, entry, q, k, v, g, beta, s0, work P, s GDNShape) error {
	if err := s.check(); err != nil {
		return err
	}
	return o.X.Launch("gdn_chunk_fwd", device.D1(s.NV), device.D1(64), 0, ptr(out), ptr(sOut), ptr(entry),
		ptr(q), ptr(k), ptr(v), ptr(g), ptr(beta), ptr(s0), ptr(work), i(s.T), i(s.NK), i(s.NV), i(s.DK), i(s.DV), i(s.C), f(s.Scale))
}

// GDNGrads are the outputs of GDNBwd (fp32).
type GDNGrads struct{ DQ, DK, DV, DG, DBeta, DS0 P }

// GDNBwd runs gdn_chunk_bwd for dout (and dsT, 0: zero) from GDNFwd's entry states.
func (o *Ops) GDNBwd(gr GDNGrads, q, k, v, g, beta, entry, dout, dsT, work P, s GDNShape) error {
	if err := s.check(); err != nil {
		return err
	}
	return o.X.Launch("gdn_chunk_bwd", device.D1(s.NK), device.D1(64), 0, ptr(gr.DQ), ptr(gr.DK), ptr(gr.DV),
		ptr(gr.DG), ptr(gr.DBeta), ptr(gr.DS0), ptr(q), ptr(k), ptr(v), ptr(g), ptr(beta), ptr(entry), ptr(dout), ptr(dsT),
		ptr(work), i(s.T), i(s.NK), i(s.NV), i(s.DK), i(s.DV), i(s.C), f(s.Scale))
}

// GDNL2NormFwd: out [T·heads, n] fp32 = per-head L2 norm of x (rows at t·stride + h·n, x
// already offset to q's or k's columns of the conv output), rinv [T·heads].
func (o *Ops) GDNL2NormFwd(out, rinv, x P, nrows, n, heads, stride int) error {
	return o.X.Launch("gdn_l2norm_fwd", rows(min(nrows, 65535)), device.D1(rowBlock(n)), 0,
		ptr(out), ptr(rinv), ptr(x), i(nrows), i(n), i(heads), i(stride))
}

// GDNL2NormBwd: dx in x's strided layout (its columns overwritten) for g [T·heads, n].
func (o *Ops) GDNL2NormBwd(dx, g, x, rinv P, nrows, n, heads, stride int) error {
	return o.X.Launch("gdn_l2norm_bwd", rows(min(nrows, 65535)), device.D1(rowBlock(n)), 0,
		ptr(dx), ptr(g), ptr(x), ptr(rinv), i(nrows), i(n), i(heads), i(stride))
}

// GDNGatesFwd: g, beta [T, nv] fp32 from in_proj_a/b outputs a, b [T, nv] bf16.
func (o *Ops) GDNGatesFwd(g, beta, a, b, aLog, dtBias P, n, nv int) error {
	return o.launchN("gdn_gates_fwd", n, ptr(g), ptr(beta), ptr(a), ptr(b), ptr(aLog), ptr(dtBias), i(n), i(nv))
}

// GDNGatesBwd: da, db bf16 for dg, dbeta fp32.
func (o *Ops) GDNGatesBwd(da, db, dg, dbeta, a, beta, aLog, dtBias P, n, nv int) error {
	return o.launchN("gdn_gates_bwd", n, ptr(da), ptr(db), ptr(dg), ptr(dbeta), ptr(a), ptr(beta), ptr(aLog), ptr(dtBias), i(n), i(nv))
}

// AttnGateFwd: y = o·sigmoid(gate) over n = T·H·hd, the gates in the second half of each
// head's 2·hd columns of qg (q_proj's output).
func (o *Ops) AttnGateFwd(y, out, qg P, n, hd int) error {
	return o.launchN("attn_gate_fwd", n, ptr(y), ptr(out), ptr(qg), i(n), i(hd))
}

// AttnGateBwd: dout, and the gate half of dqg.
func (o *Ops) AttnGateBwd(dout, dqg, dy, out, qg P, n, hd int) error {
	return o.launchN("attn_gate_bwd", n, ptr(dout), ptr(dqg), ptr(dy), ptr(out), ptr(qg), i(n), i(hd))
}

// QKNormPartialRoPEFwd: out [T·H, hd] bf16 = RMSNorm(x)·w with RoPE on the first rot dims,
// rstd [T·H]; vector v of x at v·xstride (hd for k, 2·hd for q inside a gated q_proj output).
func (o *Ops) QKNormPartialRoPEFwd(out, rstd, x, w, pos P, t, h, hd, rot, xstride int, eps, theta float32) error {
	if rot <= 0 || rot%2 != 0 || rot > hd || hd > 1024 {
		return invalid("qk_norm_prope: rot %d must be even and within head_dim %d (at most 1024)", rot, hd)
	}
	return o.X.Launch("qk_norm_prope_fwd", rows(t*h), device.D1((hd+31)/32*32), 0,
		ptr(out), ptr(rstd), ptr(x), ptr(w), ptr(pos), i(t*h), i(h), i(hd), i(rot), i(xstride), f(eps), f(theta))
}

// QKNormPartialRoPEBwd: dx in x's strided layout for dout [T·H, hd].
func (o *Ops) QKNormPartialRoPEBwd(dx, dout, x, rstd, w, pos P, t, h, hd, rot, xstride int, theta float32) error {
	if rot <= 0 || rot%2 != 0 || rot > hd || hd > 1024 {
		return invalid("qk_norm_prope: rot %d must be even and within head_dim %d (at most 1024)", rot, hd)
	}
	return o.X.Launch("qk_norm_prope_bwd", rows(t*h), device.D1((hd+31)/32*32), 0,
		ptr(dx), ptr(dout), ptr(x), ptr(rstd), ptr(w), ptr(pos), i(t*h), i(h), i(hd), i(rot), i(xstride), f(theta))
}

// CopyColsF32: dst[r·dstStride + c] = src[r·srcStride + c] for r < rows, c < n (fp32; the
// pointers already offset to the first column).
func (o *Ops) CopyColsF32(dst P, dstStride int, src P, srcStride, nrows, n int) error {
	return o.launchN("copy_cols_f32", nrows*n, ptr(dst), i(dstStride), ptr(src), i(srcStride), i(nrows), i(n))
}

// AddF32: a += b over n fp32 values.
func (o *Ops) AddF32(a, b P, n int) error {
	return o.launchN("add_f32", n, ptr(a), ptr(b), i(n))
}
