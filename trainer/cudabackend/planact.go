package cudabackend

import (
	"github.com/mass-dev/mass/cuda"
	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/model"
)

// layerActivationBytes is layer l's peak while it is recomputed from its checkpoint and
// backpropagated: the activations its forward saves, plus the larger of the MLP's and the
// mixer's gradient buffers (they are live one after the other, not together).
func layerActivationBytes(c *model.Config, l int, spec PlanSpec) int64 {
	t := int64(spec.Window)
	d, f := int64(c.HiddenSize), int64(c.IntermediateSize)
	var lo int64 // LoRA x·A intermediates, bf16, saved for B's gradient
	for _, m := range spec.Targets {
		if lora.Exists(c, l, m) {
			lo += int64(spec.Rank)
		}
	}
	// Saved (bf16): both norms' outputs, the residual after the mixer, gate, up, SiLU·up.
	saved := 2 * t * (3*d + 3*f + lo)
	mlpGrad := 2 * t * (3*f + d)
	var mixerSaved, mixerGrad int64
	if c.IsLinear(l) {
		mixerSaved, mixerGrad = gdnActivationBytes(c, spec)
	} else {
		hq, kv := int64(c.QDim()), int64(c.KVDim())
		heads := int64(c.NumHeads + c.NumKVHeads)
		// bf16: q_proj out (query and gate), k, v, normed+rotated q and k, attention out, gated out;
		// fp32: the log-sum-exp per query head and the q/k norm statistics.
		mixerSaved = 2*t*(int64(c.QProjOut())+2*kv+hq+kv+2*hq) + 4*t*(int64(c.NumHeads)+heads)
		// bf16 gradients of the projections' outputs, fp32 dQ accumulator and delta.
		mixerGrad = 2*t*(int64(c.QProjOut())+2*kv+hq) + 4*t*(hq+int64(c.NumHeads))
	}
	return saved + mixerSaved + max(mlpGrad, mixerGrad)
}

// gdnActivationBytes is a Gated DeltaNet mixer's saved activations and gradient buffers:
// bf16 projections and conv output, the fp32 inputs and output of gdn_chunk_fwd with the
// per-chunk entry states gdn_chunk_bwd reads, and the kernels' scratch.
func gdnActivationBytes(c *model.Config, spec PlanSpec) (saved, grad int64) {
	h := c.Hybrid
	t := int64(spec.Window)
	conv, kw, vw := int64(h.ConvDim()), int64(h.LinearKeyWidth()), int64(h.LinearValueWidth())
	nv, nk := int64(h.ValueHeads), int64(h.KeyHeads)
	chunks := (t + int64(spec.GDNChunk) - 1) / int64(spec.GDNChunk)
	state := nv * int64(h.KeyDim) * int64(h.ValueDim)
	// bf16: in_proj_qkv, in_proj_z, in_proj_b/a, conv+SiLU output, gated-norm output.
	bf := 2 * t * (conv + vw + 2*nv + conv + vw)
	// fp32 core: q, k (l2-normed), v, g, beta, o.
	core := 4 * t * (2*kw + vw + 2*nv + vw)
	saved = bf + core + 4*chunks*state
	work := 4 * (nv*int64(cuda.GDNWorkFloats(spec.GDNChunk, h.KeyDim, h.ValueDim)) +
		nk*int64(cuda.GDNBackWorkFloats(spec.GDNChunk, h.KeyDim, h.ValueDim)))
	// fp32 dq, dk, dv, dg, dbeta; bf16 gradients of the conv input and output and of z.
	grad = 4*t*(2*kw+vw+2*nv) + 2*t*(2*conv+vw) + work
	return saved, grad
}
