//go:build masscuda || masscudaemu

package cudabackend

import (
	"github.com/mass-dev/mass/cuda/kernels"
	"github.com/mass-dev/mass/trainer/model"
)

// DefaultClearScratchMax is where the clear attention path stops: 8 GiB of [Hq, T, T]
// scratch per window. With Hq·T²·8 bytes (fp32 scores, bf16 probabilities and bf16 score
// gradients in the backward) that is T ≤ 8,192 for Qwen3-0.6B (16 heads) and T ≤ 5,792
// for Qwen3-4B (32 heads); a 4B window of 16,384 tokens would need 68.7 GB and one of
// 32,768 tokens 275 GB, past an H200's 141 GB. Longer windows run the flash path, whose
// scratch grows with T, not T².
const DefaultClearScratchMax int64 = 8 << 30

// ClearScratchBytes is the clear path's scratch for one window of t tokens: Hq·t²·8 bytes
// (the backward's peak; the forward needs 6 of the 8).
func ClearScratchBytes(c *model.Config, t int) int64 {
	return int64(c.NumHeads) * int64(t) * int64(t) * 8
}

// flashFor reports whether a window of t tokens runs the flash path: when it is chosen, or
// when the clear path's scratch would pass ClearScratchMax and flash supports the head size.
func (b *Backend) flashFor(t int) bool {
	if b.opt.Attention == AttnFlash {
		return true
	}
	limit := b.opt.ClearScratchMax
	if limit <= 0 {
		limit = DefaultClearScratchMax
	}
	return ClearScratchBytes(b.cfg, t) > limit && b.cfg.HeadDim <= kernels.MaxFlashHeadDim
}
