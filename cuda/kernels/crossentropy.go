//go:build masscuda || masscudaemu

package kernels

import (
	"github.com/mass-dev/mass/cuda/cublaslt"
	"github.com/mass-dev/mass/cuda/device"
)

// DefaultCEChunk is the vocabulary chunk of the fused LM head: T×8192 fp32 logits at a time.
const DefaultCEChunk = 8192

// CEArgs are the fused LM head's inputs: hidden states X [T, D] and head W [V, D] in bf16,
// Targets [T] int32 (negative = masked), Scale = 1/supervised tokens.
type CEArgs struct {
	X, W, Targets P
	T, D, V       int
	Chunk         int
	Scale         float32 // weight of each supervised token in Loss (1/supervised)
	GradScale     float32 // weight of each token's gradient in DX; 0 means Scale
}

// CEOut receives the results: Loss [1] fp32 (the mean over supervised tokens), LSE and
// PerToken [T] fp32, and, when DX is non-zero, the gradient DX [T, D] bf16.
type CEOut struct {
	Loss, LSE, PerToken, DX P
}

// LMHeadCE runs the fused masked LM-head cross-entropy: the vocabulary is walked in chunks
// with an online softmax, and the backward recomputes each chunk's logits, so no more than
// T×Chunk logits exist at any time.
//
// With DX requested the pass is the fused linear cross-entropy instead (lmHeadCEGrad):
// token chunks with full-vocabulary logits, the gradient computed with the loss.
func (o *Ops) LMHeadCE(a CEArgs, out CEOut) error {
	if out.DX != 0 {
		return o.lmHeadCEGrad(a, out)
	}
	c := a.Chunk
	if c <= 0 {
		c = DefaultCEChunk
	}
	c = min(c, a.V)
	lb, db, vb := align(a.T*c*f32Size), align(a.T*c*bf16Size), align(a.T*f32Size)
	scratch, err := o.alloc(lb + db + 3*vb)
	if err != nil {
		return err
	}
	defer o.X.Free(scratch)
	logits := scratch.Ptr
	dlogits := logits + P(lb)
	m := dlogits + P(db)
	s, zt := m+P(vb), m+P(2*vb)
	logitsOf := func(v0, n int) error {
		return o.Gemm(cublaslt.Gemm{TransB: true, M: a.T, N: n, K: a.D, A: a.X,
			B: a.W + P(v0*a.D*bf16Size), C: logits, CType: cublaslt.F32, Alpha: 1})
	}
	if err := o.launchN("ce_init", a.T, ptr(m), ptr(s), ptr(zt), i(a.T)); err != nil {
		return err
	}
	for v0 := 0; v0 < a.V; v0 += c {
		n := min(c, a.V-v0)
		if err := logitsOf(v0, n); err != nil {
			return err
		}
		if err := o.X.Launch("ce_chunk_update", rows(a.T), device.D1(256), 0,
			ptr(m), ptr(s), ptr(zt), ptr(logits), ptr(a.Targets), i(a.T), i(n), i(v0)); err != nil {
			return err
		}
	}
	if err := o.Fill(out.Loss, 0, 1); err != nil {
		return err
	}
	if err := o.launchN("ce_finalize", a.T, ptr(out.PerToken), ptr(out.LSE), ptr(out.Loss),
		ptr(m), ptr(s), ptr(zt), ptr(a.Targets), i(a.T), f(a.Scale)); err != nil {
		return err
	}
	if out.DX == 0 {
		return nil
	}
	gs := a.GradScale
	if gs == 0 {
		gs = a.Scale
	}
	dx32, err := o.alloc(a.T * a.D * f32Size)
	if err != nil {
		return err
	}
	defer o.X.Free(dx32)
	for v0 := 0; v0 < a.V; v0 += c {
		n := min(c, a.V-v0)
		if err := logitsOf(v0, n); err != nil {
			return err
		}
		if err := o.launchN("ce_chunk_grad", a.T*n, ptr(dlogits), ptr(logits), ptr(out.LSE),
			ptr(a.Targets), i(a.T), i(n), i(v0), f(gs)); err != nil {
			return err
		}
		if err := o.Gemm(cublaslt.Gemm{M: a.T, N: a.D, K: n, A: dlogits, B: a.W + P(v0*a.D*bf16Size),
			C: dx32.Ptr, CType: cublaslt.F32, Alpha: 1, Beta: beta(v0)}); err != nil {
			return err
		}
	}
	return o.CastF32BF16(out.DX, dx32.Ptr, a.T*a.D)
}

// ceTokenChunk is the token chunk of the fused pass: as many rows as hold the same
// T×Chunk logits the loss-only walk keeps, rounded to 16 and at least 16.
func ceTokenChunk(a CEArgs) int {
	c := a.Chunk
	if c <= 0 {
		c = DefaultCEChunk
	}
	rows := a.T * min(c, a.V) / a.V
	return min(a.T, max(16, rows/16*16))
}

// lmHeadCEGrad is the single-pass LM head for training: per token chunk one logits GEMM
// [rows, V], ce_rows (lse, loss and d(logits) in bf16), and one dX GEMM over the whole
// vocabulary that writes the chunk's rows of DX in bf16; no logits are recomputed.
func (o *Ops) lmHeadCEGrad(a CEArgs, out CEOut) error {
	gs := a.GradScale
	if gs == 0 {
		gs = a.Scale
	}
	tc := ceTokenChunk(a)
	lb := align(tc * a.V * f32Size)
	scratch, err := o.alloc(lb + align(tc*a.V*bf16Size))
	if err != nil {
		return err
	}
	defer o.X.Free(scratch)
	logits, dlogits := scratch.Ptr, scratch.Ptr+P(lb)
	if err := o.Fill(out.Loss, 0, 1); err != nil {
		return err
	}
	for t0 := 0; t0 < a.T; t0 += tc {
		n := min(tc, a.T-t0)
		x := a.X + P(t0*a.D*bf16Size)
		if err := o.Gemm(cublaslt.Gemm{TransB: true, M: n, N: a.V, K: a.D, A: x, B: a.W, C: logits,
			CType: cublaslt.F32, Alpha: 1}); err != nil {
			return err
		}
		if err := o.X.Launch("ce_rows", rows(n), device.D1(256), 0, ptr(dlogits), ptr(out.PerToken+P(t0*f32Size)),
			ptr(out.LSE+P(t0*f32Size)), ptr(out.Loss), ptr(logits), ptr(a.Targets+P(t0*4)), i(a.V), f(a.Scale), f(gs)); err != nil {
			return err
		}
		if err := o.Gemm(cublaslt.Gemm{M: n, N: a.D, K: a.V, A: dlogits, B: a.W, C: out.DX + P(t0*a.D*bf16Size),
			CType: cublaslt.BF16, Alpha: 1}); err != nil {
			return err
		}
	}
	return nil
}

// AdamW runs one optimizer step over n fp32 parameters.
func (o *Ops) AdamW(p, m, v, g P, n int, lr, beta1, beta2, eps, wd, bc1, bc2, gscale float32) error {
	return o.launchN("adamw", n, ptr(p), ptr(m), ptr(v), ptr(g), i(n), f(lr), f(beta1), f(beta2),
		f(eps), f(wd), f(bc1), f(bc2), f(gscale))
}

// align rounds a byte count up to 256 so that sub-buffers carved from one block stay aligned.
func align(n int) int { return (n + 255) &^ 255 }

// FlatStep is one fused device-optimizer step (adamw_flat): hyperparameters, bias
// corrections 1 − β^step, and the clipping bound (0: no clipping).
type FlatStep struct {
	LR, Beta1, Beta2, Eps, WeightDecay float32
	BC1, BC2                           float32
	MaxNorm                            float32
}

// AdamWFlat updates n flat fp32 masters p with moments m, v from gradients g, clipped by
// the global Σg² at sumsq, writes their bf16 copies to pbf and zeroes g.
func (o *Ops) AdamWFlat(p, m, v, g, pbf, sumsq P, n int, s FlatStep) error {
	return o.launchN("adamw_flat", n, ptr(p), ptr(m), ptr(v), ptr(g), ptr(pbf), ptr(sumsq), i(n),
		f(s.LR), f(s.Beta1), f(s.Beta2), f(s.Eps), f(s.WeightDecay), f(s.BC1), f(s.BC2), f(s.MaxNorm))
}
