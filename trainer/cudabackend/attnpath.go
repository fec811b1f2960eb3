//go:build masscuda || masscudaemu

package cudabackend

import (
	"fmt"

	"github.com/mass-dev/mass/cuda"
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

func attnShape(c *model.Config, t int) cuda.AttnShape {
	return cuda.AttnShape{T: t, QHeads: c.NumHeads, KVHeads: c.NumKVHeads, HeadDim: c.HeadDim}
}

// checkAttention refuses an attention choice the model's shape cannot run.
func checkAttention(c *model.Config, attn string) error {
	switch attn {
	case AttnAuto, "", AttnClear:
		return nil
	case AttnFlash:
		if c.HeadDim > kernels.MaxFlashHeadDim {
			return fmt.Errorf("%w: flash attention supports head_dim up to %d, not %d", model.ErrUnsupported, kernels.MaxFlashHeadDim, c.HeadDim)
		}
		return nil
	case AttnTC:
		if !kernels.TCSupports(attnShape(c, 1)) {
			return fmt.Errorf("%w: tensor-core attention supports head_dim %v, not %d", model.ErrUnsupported, kernels.TCHeadDims, c.HeadDim)
		}
		return nil
	}
	return fmt.Errorf("attention %q: want %s, %s, %s or %s", attn, AttnAuto, AttnTC, AttnClear, AttnFlash)
}

// attnFor returns the path a window of t tokens runs: the chosen one, where auto means the
// tensor cores when the head size is built and the clear path otherwise; the clear path
// gives way to flash when its scratch would pass ClearScratchMax and flash supports the
// head size.
func (b *Backend) attnFor(t int) string {
	a := b.opt.Attention
	if a == AttnAuto || a == "" {
		a = AttnClear
		if kernels.TCSupports(attnShape(b.cfg, t)) {
			a = AttnTC
		}
	}
	if a != AttnClear {
		return a
	}
	limit := b.opt.ClearScratchMax
	if limit <= 0 {
		limit = DefaultClearScratchMax
	}
	if ClearScratchBytes(b.cfg, t) > limit && b.cfg.HeadDim <= kernels.MaxFlashHeadDim {
		return AttnFlash
	}
	return AttnClear
}
