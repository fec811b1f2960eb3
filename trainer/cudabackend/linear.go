//go:build masscuda || masscudaemu

package cudabackend

import (
	"github.com/mass-dev/mass/cuda/cublaslt"
)

// linear describes one projection call on a window of T rows.
type linear struct {
	T, in, out int
	w          uintptr  // W [out, in] bf16
	bias       uintptr  // b [out] bf16 (frozen, no gradient), 0 without
	lo         *loraMod // nil when not adapted
	seed       uint32   // dropout stream of this call
	dropout    float32  // 0 when not training
}

// forward computes y = x·Wᵀ (+ b) + s·(drop(x)·Aᵀ)·Bᵀ into y and returns xa = drop(x)·Aᵀ
// [T, r] (allocated in sc, kept for the backward), or 0 without LoRA. The dropped input
// is scratch in tmp. The bias is written into y first and the product accumulates onto
// it, so x·Wᵀ + b is rounded to bf16 once.
func (b *Backend) linFwd(sc, tmp *scope, l linear, y, x uintptr) (uintptr, error) {
	o := b.ops
	if err := b.baseFwd(l, y, x); err != nil {
		return 0, err
	}
	if l.lo == nil {
		return 0, nil
	}
	xin := x
	if l.dropout > 0 {
		xd, err := tmp.bf16(l.T * l.in)
		if err != nil {
			return 0, err
		}
		if err := o.Dropout(xd, x, l.T*l.in, l.seed, l.dropout); err != nil {
			return 0, err
		}
		xin = xd
	}
	xa, err := sc.bf16(l.T * l.lo.rank)
	if err != nil {
		return 0, err
	}
	if err := o.Gemm(cublaslt.Gemm{TransB: true, M: l.T, N: l.lo.rank, K: l.in, A: xin, B: l.lo.abf.Ptr, C: xa,
		CType: cublaslt.BF16, Alpha: 1}); err != nil {
		return 0, err
	}
	return xa, o.Gemm(cublaslt.Gemm{TransB: true, M: l.T, N: l.out, K: l.lo.rank, A: xa, B: l.lo.bbf.Ptr, C: y,
		CType: cublaslt.BF16, Alpha: b.w.scaling, Beta: 1})
}

// baseFwd computes y = x·Wᵀ (+ b), the bias written first and the product accumulated
// onto it.
func (b *Backend) baseFwd(l linear, y, x uintptr) error {
	beta := float32(0)
	if l.bias != 0 {
		if err := b.ops.BiasFill(y, l.bias, l.T, l.out); err != nil {
			return err
		}
		beta = 1
	}
	return b.ops.Gemm(cublaslt.Gemm{TransB: true, M: l.T, N: l.out, K: l.in, A: x, B: l.w, C: y,
		CType: cublaslt.BF16, Alpha: 1, Beta: beta})
}

// backward adds the input gradient into dx (overwriting it unless accumulate) and the LoRA
// gradients into the fp32 device gradients: dB += s·dyᵀ·xa, dA += s·(dy·B)ᵀ·drop(x),
// dx (+)= dy·W + drop'(s·(dy·B)·A). The bias is frozen and adds no term. Scratch comes
// from tmp, which the caller releases.
func (b *Backend) linBwd(tmp *scope, l linear, dx uintptr, accumulate bool, dy, x, xa uintptr) error {
	o := b.ops
	beta := float32(0)
	if accumulate {
		beta = 1
	}
	if err := o.Gemm(cublaslt.Gemm{M: l.T, N: l.in, K: l.out, A: dy, B: l.w, C: dx,
		CType: cublaslt.BF16, Alpha: 1, Beta: beta}); err != nil {
		return err
	}
	if l.lo == nil {
		return nil
	}
	lo, s := l.lo, b.w.scaling
	if err := o.Gemm(cublaslt.Gemm{TransA: true, M: l.out, N: lo.rank, K: l.T, A: dy, B: xa, C: lo.gb.Ptr,
		CType: cublaslt.F32, Alpha: s, Beta: 1}); err != nil {
		return err
	}
	dxa, err := tmp.bf16(l.T * lo.rank)
	if err != nil {
		return err
	}
	if err := o.Gemm(cublaslt.Gemm{M: l.T, N: lo.rank, K: l.out, A: dy, B: lo.bbf.Ptr, C: dxa,
		CType: cublaslt.BF16, Alpha: 1}); err != nil {
		return err
	}
	xin := x
	if l.dropout > 0 {
		if xin, err = tmp.bf16(l.T * l.in); err != nil {
			return err
		}
		if err := o.Dropout(xin, x, l.T*l.in, l.seed, l.dropout); err != nil {
			return err
		}
	}
	if err := o.Gemm(cublaslt.Gemm{TransA: true, M: lo.rank, N: l.in, K: l.T, A: dxa, B: xin, C: lo.ga.Ptr,
		CType: cublaslt.F32, Alpha: s, Beta: 1}); err != nil {
		return err
	}
	if l.dropout == 0 {
		return o.Gemm(cublaslt.Gemm{M: l.T, N: l.in, K: lo.rank, A: dxa, B: lo.abf.Ptr, C: dx,
			CType: cublaslt.BF16, Alpha: s, Beta: 1})
	}
	t, err := tmp.bf16(l.T * l.in)
	if err != nil {
		return err
	}
	if err := o.Gemm(cublaslt.Gemm{M: l.T, N: l.in, K: lo.rank, A: dxa, B: lo.abf.Ptr, C: t,
		CType: cublaslt.BF16, Alpha: s}); err != nil {
		return err
	}
	// The dropout mask is linear: applying it again to the gradient is its backward, fused
	// with the add into dx.
	return o.DropoutAdd(dx, t, l.T*l.in, l.seed, l.dropout)
}
