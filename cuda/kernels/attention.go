//go:build masscuda || masscudaemu

package kernels

import (
	"github.com/mass-dev/mass/cuda"
	"github.com/mass-dev/mass/cuda/cublaslt"
	"github.com/mass-dev/mass/cuda/device"
	"github.com/mass-dev/mass/cuda/devmem"
)

const bf16Size, f32Size = 2, 4

// MaxFlashHeadDim is the largest head_dim flash_attn.cu supports.
const MaxFlashHeadDim = 128

func flashBwdSmem(hd int) int { return (4*32*(hd+1) + 2*hd) * f32Size }

// AttnBufs are one attention call's device tensors: Q, O [T, Hq, hd] and K, V [T, Hkv, hd]
// in bf16, LSE [Hq, T] fp32 (flash and tensor-core paths).
type AttnBufs struct {
	Q, K, V, O, LSE P
}

// AttnGrads are the backward's inputs and outputs (bf16, shaped like their tensors).
type AttnGrads struct {
	DO, DQ, DK, DV P
}

func (o *Ops) alloc(bytes int) (devmem.Block, error) { return o.X.Alloc(int64(bytes)) }

// checkFlash refuses shapes flash_attn.cu cannot run. The kernels map query head h to kv
// head h/(QHeads/KVHeads), so a head count that does not divide evenly would read past K
// and V; the check runs before any allocation or launch.
func checkFlash(s cuda.AttnShape) error {
	if s.HeadDim <= 0 || s.HeadDim > MaxFlashHeadDim {
		return invalid("flash attention: head_dim %d, want 1 to %d (use the clear attention path)", s.HeadDim, MaxFlashHeadDim)
	}
	if s.QHeads <= 0 || s.KVHeads <= 0 || s.QHeads%s.KVHeads != 0 {
		return invalid("flash attention: %d query heads do not divide evenly among %d kv heads (grouped-query attention needs query heads a positive multiple of kv heads)",
			s.QHeads, s.KVHeads)
	}
	return nil
}

// FlashFwd runs the tiled attention kernel, writing O and LSE.
func (o *Ops) FlashFwd(b AttnBufs, s cuda.AttnShape) error {
	if err := checkFlash(s); err != nil {
		return err
	}
	return o.X.Launch("flash_attn_fwd", device.Dim{X: (s.T + 15) / 16, Y: s.QHeads, Z: 1}, device.D1(128), 0,
		ptr(b.O), ptr(b.LSE), ptr(b.Q), ptr(b.K), ptr(b.V), i(s.T), i(s.QHeads), i(s.KVHeads),
		i(s.HeadDim), f(float32(s.Scale())))
}

// FlashBwd computes DQ, DK, DV from DO and the forward's Q, K, V, O, LSE.
func (o *Ops) FlashBwd(b AttnBufs, g AttnGrads, s cuda.AttnShape) error {
	if err := checkFlash(s); err != nil {
		return err
	}
	delta, err := o.alloc(s.QHeads * s.T * f32Size)
	if err != nil {
		return err
	}
	defer o.X.Free(delta)
	nq := s.T * s.QHeads * s.HeadDim
	dq32, err := o.alloc(nq * f32Size)
	if err != nil {
		return err
	}
	defer o.X.Free(dq32)
	if err := o.Fill(dq32.Ptr, 0, nq); err != nil {
		return err
	}
	if err := o.X.Launch("flash_attn_bwd_delta", device.D1(s.T*s.QHeads), device.D1(32), 0,
		ptr(delta.Ptr), ptr(b.O), ptr(g.DO), i(s.T), i(s.QHeads), i(s.HeadDim)); err != nil {
		return err
	}
	if err := o.X.Launch("flash_attn_bwd", device.Dim{X: (s.T + 31) / 32, Y: s.KVHeads, Z: 1}, device.D1(32),
		flashBwdSmem(s.HeadDim), ptr(dq32.Ptr), ptr(g.DK), ptr(g.DV), ptr(b.Q), ptr(b.K), ptr(b.V),
		ptr(g.DO), ptr(b.LSE), ptr(delta.Ptr), i(s.T), i(s.QHeads), i(s.KVHeads), i(s.HeadDim),
		f(float32(s.Scale()))); err != nil {
		return err
	}
	return o.CastF32BF16(g.DQ, dq32.Ptr, nq)
}

// headGemm runs one product per query head through strided batches over the kv heads,
// once for each position gi inside a group.
func (o *Ops) headGemm(s cuda.AttnShape, fn func(gi, g int) cublaslt.Gemm) error {
	g := s.QHeads / s.KVHeads
	for gi := 0; gi < g; gi++ {
		gm := fn(gi, g)
		gm.Batch = s.KVHeads
		if err := o.Gemm(gm); err != nil {
			return err
		}
	}
	return nil
}

// scores writes S [Hq, T, T] fp32 = scale·Q_h·K_hᵀ (or dP = dO_h·V_hᵀ with scale 1).
func (o *Ops) scores(dst, a, b P, s cuda.AttnShape, scale float32) error {
	t, hd := s.T, s.HeadDim
	return o.headGemm(s, func(gi, g int) cublaslt.Gemm {
		return cublaslt.Gemm{TransB: true, M: t, N: t, K: hd,
			A: a + P(gi*hd*bf16Size), LDA: s.QHeads * hd, StrideA: int64(g * hd),
			B: b, LDB: s.KVHeads * hd, StrideB: int64(hd),
			C: dst + P(gi*t*t*f32Size), LDC: t, StrideC: int64(g * t * t), CType: cublaslt.F32,
			Alpha: scale}
	})
}

// AttnClearFwd is the clear attention path: S by batched GEMMs, causal softmax into P
// (bf16, kept for the backward), then O = P·V. S is fp32 [Hq, T, T] scratch.
func (o *Ops) AttnClearFwd(b AttnBufs, pbuf, sbuf P, s cuda.AttnShape) error {
	t, hd := s.T, s.HeadDim
	if err := o.scores(sbuf, b.Q, b.K, s, float32(s.Scale())); err != nil {
		return err
	}
	if err := o.X.Launch("softmax_causal_fwd", rows(s.QHeads*t), device.D1(rowBlock(t)), 0,
		ptr(pbuf), ptr(sbuf), i(s.QHeads*t), i(t)); err != nil {
		return err
	}
	return o.headGemm(s, func(gi, g int) cublaslt.Gemm {
		return cublaslt.Gemm{M: t, N: hd, K: t,
			A: pbuf + P(gi*t*t*bf16Size), LDA: t, StrideA: int64(g * t * t),
			B: b.V, LDB: s.KVHeads * hd, StrideB: int64(hd),
			C: b.O + P(gi*hd*bf16Size), LDC: s.QHeads * hd, StrideC: int64(g * hd), CType: cublaslt.BF16,
			Alpha: 1}
	})
}

// AttnClearBwd is the clear path's backward, from P saved by AttnClearFwd. sbuf (fp32)
// and dsbuf (bf16) are [Hq, T, T] scratch.
func (o *Ops) AttnClearBwd(b AttnBufs, g AttnGrads, pbuf, sbuf, dsbuf P, s cuda.AttnShape) error {
	t, hd := s.T, s.HeadDim
	nkv := t * s.KVHeads * hd
	acc, err := o.alloc(2 * nkv * f32Size)
	if err != nil {
		return err
	}
	defer o.X.Free(acc)
	dk32, dv32 := acc.Ptr, acc.Ptr+P(nkv*f32Size)
	// dV_j = Σ_h P_hᵀ·dO_h; dP_h = dO_h·V_jᵀ.
	if err := o.headGemm(s, func(gi, gr int) cublaslt.Gemm {
		return cublaslt.Gemm{TransA: true, M: t, N: hd, K: t,
			A: pbuf + P(gi*t*t*bf16Size), LDA: t, StrideA: int64(gr * t * t),
			B: g.DO + P(gi*hd*bf16Size), LDB: s.QHeads * hd, StrideB: int64(gr * hd),
			C: dv32, LDC: s.KVHeads * hd, StrideC: int64(hd), CType: cublaslt.F32,
			Alpha: 1, Beta: beta(gi)}
	}); err != nil {
		return err
	}
	if err := o.scores(sbuf, g.DO, b.V, s, 1); err != nil {
		return err
	}
	if err := o.X.Launch("softmax_causal_bwd", rows(s.QHeads*t), device.D1(rowBlock(t)), 0,
		ptr(dsbuf), ptr(pbuf), ptr(sbuf), i(s.QHeads*t), i(t), f(float32(s.Scale()))); err != nil {
		return err
	}
	// dQ_h = dS_h·K_j; dK_j = Σ_h dS_hᵀ·Q_h.
	if err := o.headGemm(s, func(gi, gr int) cublaslt.Gemm {
		return cublaslt.Gemm{M: t, N: hd, K: t,
			A: dsbuf + P(gi*t*t*bf16Size), LDA: t, StrideA: int64(gr * t * t),
			B: b.K, LDB: s.KVHeads * hd, StrideB: int64(hd),
			C: g.DQ + P(gi*hd*bf16Size), LDC: s.QHeads * hd, StrideC: int64(gr * hd), CType: cublaslt.BF16,
			Alpha: 1}
	}); err != nil {
		return err
	}
	if err := o.headGemm(s, func(gi, gr int) cublaslt.Gemm {
		return cublaslt.Gemm{TransA: true, M: t, N: hd, K: t,
			A: dsbuf + P(gi*t*t*bf16Size), LDA: t, StrideA: int64(gr * t * t),
			B: b.Q + P(gi*hd*bf16Size), LDB: s.QHeads * hd, StrideB: int64(gr * hd),
			C: dk32, LDC: s.KVHeads * hd, StrideC: int64(hd), CType: cublaslt.F32,
			Alpha: 1, Beta: beta(gi)}
	}); err != nil {
		return err
	}
	if err := o.CastF32BF16(g.DK, dk32, nkv); err != nil {
		return err
	}
	return o.CastF32BF16(g.DV, dv32, nkv)
}

func beta(gi int) float32 {
	if gi == 0 {
		return 0
	}
	return 1
}

// rowBlock is the block size of a one-block-per-row kernel over rows of n elements: 256
// threads, or fewer (a multiple of 32) for short rows, whose extra threads would only idle
// through the reductions.
func rowBlock(n int) int { return min(256, max(32, (n+31)/32*32)) }
