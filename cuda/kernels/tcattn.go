//go:build masscuda || masscudaemu

package kernels

import (
	"fmt"
	"slices"

	"github.com/mass-dev/mass/cuda"
	"github.com/mass-dev/mass/cuda/device"
)

// TCHeadDims are the head sizes the tensor-core attention kernels (tc_attn.cu) are built for.
var TCHeadDims = []int{16, 32, 64, 128}

// TCSupports reports whether the tensor-core attention runs shape s: a built head size and
// query heads a positive multiple of kv heads.
func TCSupports(s cuda.AttnShape) bool {
	return slices.Contains(TCHeadDims, s.HeadDim) && s.KVHeads > 0 && s.QHeads > 0 && s.QHeads%s.KVHeads == 0
}

// TCBwdSmem is tc_attn_bwd's dynamic shared memory (TcBwdSmem in tc_attn_bwd.cu): K, V and
// Kᵀ of the block's 64 keys, Q, dO and their transposes for a 32-row query tile, dS, then
// lse and delta.
func TCBwdSmem(hd int) int {
	const bc, bq, pad = 64, 32, 8
	lk, lt, lq := hd+pad, bc+pad, bq+pad
	return bf16Size*(2*bc*lk+hd*lt+2*bq*lk+2*hd*lq+bq*lt) + 2*bq*f32Size
}

func checkTC(s cuda.AttnShape, ptrs ...P) error {
	if !TCSupports(s) {
		return invalid("tensor-core attention: head_dim %d, %d query / %d kv heads: want head_dim in %v and query heads a positive multiple of kv heads",
			s.HeadDim, s.QHeads, s.KVHeads, TCHeadDims)
	}
	for _, p := range ptrs {
		if p%16 != 0 {
			return invalid("tensor-core attention: tensor at %#x is not 16-byte aligned (the kernels copy 128 bits at a time)", p)
		}
	}
	return nil
}

// TCFwd runs tc_attn_fwd, writing O and LSE (as FlashFwd, on tensor cores).
func (o *Ops) TCFwd(b AttnBufs, s cuda.AttnShape) error {
	if err := checkTC(s, b.Q, b.K, b.V, b.O); err != nil {
		return err
	}
	return o.X.Launch(fmt.Sprintf("tc_attn_fwd_hd%d", s.HeadDim), device.Dim{X: (s.T + 63) / 64, Y: s.QHeads, Z: 1},
		device.D1(128), 0, ptr(b.O), ptr(b.LSE), ptr(b.Q), ptr(b.K), ptr(b.V), i(s.T), i(s.QHeads), i(s.KVHeads),
		f(float32(s.Scale())))
}

// TCBwd computes DQ, DK, DV from DO and the forward's Q, K, V, O, LSE (as FlashBwd).
func (o *Ops) TCBwd(b AttnBufs, g AttnGrads, s cuda.AttnShape) error {
	if err := checkTC(s, b.Q, b.K, b.V, b.O, g.DO, g.DK, g.DV); err != nil {
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
	if err := o.X.Launch("tc_attn_delta", device.D1((s.T*s.QHeads+7)/8), device.D1(256), 0,
		ptr(delta.Ptr), ptr(b.O), ptr(g.DO), i(s.T), i(s.QHeads), i(s.HeadDim)); err != nil {
		return err
	}
	if err := o.X.Launch(fmt.Sprintf("tc_attn_bwd_hd%d", s.HeadDim), device.Dim{X: (s.T + 63) / 64, Y: s.KVHeads, Z: 1},
		device.D1(128), TCBwdSmem(s.HeadDim), ptr(dq32.Ptr), ptr(g.DK), ptr(g.DV), ptr(b.Q), ptr(b.K), ptr(b.V),
		ptr(g.DO), ptr(b.LSE), ptr(delta.Ptr), i(s.T), i(s.QHeads), i(s.KVHeads), f(float32(s.Scale()))); err != nil {
		return err
	}
	return o.CastF32BF16(g.DQ, dq32.Ptr, nq)
}

// setTCSmem raises the backward kernels' dynamic shared-memory limit (96 KB at head_dim 128).
func setTCSmem(x *device.Exec) error {
	for _, hd := range TCHeadDims {
		if err := x.SetMaxDynamicSmem(fmt.Sprintf("tc_attn_bwd_hd%d", hd), TCBwdSmem(hd)); err != nil {
			return err
		}
	}
	return nil
}

// MMAProbe runs mma_probe: D [16][8] fp32 += A [16][16]·Bᵀ with B given as [8][16], all
// row-major, through the fragment loaders and one mma.sync of the tensor-core kernels.
func (o *Ops) MMAProbe(d, a, b P) error {
	return o.X.Launch("mma_probe", device.D1(1), device.D1(32), 0, ptr(d), ptr(a), ptr(b))
}
