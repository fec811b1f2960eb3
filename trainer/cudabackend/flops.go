package cudabackend

import "github.com/mass-dev/mass/trainer/model"

// DefaultPeakTFLOPs is the dense bf16 rate of an H100/H200 SXM by the datasheet.
const DefaultPeakTFLOPs = 989.4

// FrozenParams counts the weights that take part in matrix products: every projection of
// every layer and the LM head (the embedding lookup is not a product).
func FrozenParams(c *model.Config) float64 {
	d, q, kv, f := float64(c.HiddenSize), float64(c.NumHeads*c.HeadDim), float64(c.NumKVHeads*c.HeadDim), float64(c.IntermediateSize)
	perLayer := d*q + 2*d*kv + q*d + 3*d*f
	return float64(c.NumLayers)*perLayer + float64(c.VocabSize)*d
}

// TrainFLOPsPerToken is the NeMo-style LoRA count for a window of seq tokens: forward and
// backward through frozen weights without weight gradients, 4·N, plus causal attention,
// 6·L·Hq·hd·(seq+1) (QKᵀ and PV over the lower triangle forward, twice that backward).
// The adapter's own products are left out, as NeMo does.
func TrainFLOPsPerToken(c *model.Config, seq int) float64 {
	attn := 6 * float64(c.NumLayers) * float64(c.NumHeads) * float64(c.HeadDim) * float64(seq+1)
	return 4*FrozenParams(c) + attn
}

// MFU is achieved FLOP/s over the peak: tokensPerSec·TrainFLOPsPerToken / (peak·1e12).
func MFU(c *model.Config, seq int, tokensPerSec, peakTFLOPs float64) float64 {
	return tokensPerSec * TrainFLOPsPerToken(c, seq) / (peakTFLOPs * 1e12)
}

// Qwen3Shape returns the configuration of a Qwen3 size by name ("0.6b", "4b"), for random
// full-size benchmarks; ok is false for other names.
func Qwen3Shape(name string) (*model.Config, bool) {
	base := model.Config{Arch: model.Qwen3, ModelType: "qwen3", Architectures: []string{"Qwen3ForCausalLM"},
		VocabSize: 151936, HeadDim: 128, RMSNormEps: 1e-6, RopeTheta: 1000000, TieWordEmbeddings: true,
		MaxPositions: 40960, HiddenAct: "silu"}
	switch name {
	case "0.6b":
		base.HiddenSize, base.IntermediateSize, base.NumLayers, base.NumHeads, base.NumKVHeads = 1024, 3072, 28, 16, 8
	case "4b":
		base.HiddenSize, base.IntermediateSize, base.NumLayers, base.NumHeads, base.NumKVHeads = 2560, 9728, 36, 32, 8
	default:
		return nil, false
	}
	return &base, true
}
