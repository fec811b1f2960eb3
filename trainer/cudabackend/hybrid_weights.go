//go:build masscuda || masscudaemu

package cudabackend

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/mass-dev/mass/cuda/devmem"
	"github.com/mass-dev/mass/cuda/kernels"
	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/model"
)

// hybridW is what a Qwen3.5/3.6 layer has beyond layerW: which mixer it runs and the
// Gated DeltaNet's frozen parts (b and a projections without LoRA, fp32 conv, gates and
// gated-norm weights).
type hybridW struct {
	linear                     bool
	bproj, aproj               devmem.Block // in_proj_b, in_proj_a [nv, D] bf16
	conv, aLog, dtBias, gnormW devmem.Block // fp32: [C, K], [nv], [nv], [dv]
}

// onePlus is Qwen3.5's RMSNorm weight form: the checkpoint stores w, the norm scales by 1 + w.
func onePlus(w []float32) []float32 {
	out := make([]float32, len(w))
	for i, v := range w {
		out[i] = 1 + v
	}
	return out
}

// norm uploads an RMSNorm weight (1 + w for the hybrid) as bf16.
func (u *uploader) norm(name string, dim int) (devmem.Block, error) {
	var tf func([]float32) []float32
	if u.w.hybrid {
		tf = onePlus
	}
	return u.getAs(name, false, tf, dim)
}

// randomF32 fills an fp32 benchmark weight on the host: A_log and dt_bias 0 (g = −softplus(a)),
// the gated norm 1, the conv N(0, 1/K).
func (u *uploader) randomF32(name string, shape []int, size int) (devmem.Block, error) {
	u.n++
	r := rand.New(rand.NewPCG(uint64(u.seed), uint64(u.n)))
	v := make([]float32, size)
	switch {
	case strings.HasSuffix(name, "norm.weight"):
		for i := range v {
			v[i] = 1
		}
	case len(shape) > 1:
		for i := range v {
			v[i] = float32(r.NormFloat64() / float64(shape[len(shape)-1]))
		}
	}
	return kernels.Upload(u.o.X, v)
}

// hybridLayer uploads layer l of a Qwen3.5/3.6 hybrid: the (1 + w) norms, the MLP, and
// either the gated attention (q_proj with the output gate, (1 + w) q/k norms) or the Gated
// DeltaNet, with LoRA on every adapted module that exists in the layer.
func (u *uploader) hybridLayer(c *model.Config, a *lora.Adapter, l int) (layerW, error) {
	lw := layerW{hy: &hybridW{linear: c.IsLinear(l)}}
	h, hy := c.Hybrid, lw.hy
	ln := func(s string) string { return model.LayerName(l, s) }
	var err error
	norms := []normW{{&lw.inNorm, "input_layernorm.weight", c.HiddenSize}, {&lw.postNorm, "post_attention_layernorm.weight", c.HiddenSize}}
	if !hy.linear {
		norms = append(norms, normW{&lw.qNorm, "self_attn.q_norm.weight", c.HeadDim}, normW{&lw.kNorm, "self_attn.k_norm.weight", c.HeadDim})
	}
	for _, nw := range norms {
		if *nw.dst, err = u.norm(ln(nw.name), nw.dim); err != nil {
			return lw, err
		}
	}
	for mi, mod := range allMods {
		if !lora.Exists(c, l, mod) {
			continue
		}
		in, out := lora.Dims(c, mod)
		if lw.proj[mi], err = u.get(ln(lora.ModulePath(mod)+".weight"), out, in); err != nil {
			return lw, err
		}
		if !a.Config.Has(mod) {
			continue
		}
		lm := &loraMod{a: a.Param(lora.AName(l, mod)), b: a.Param(lora.BName(l, mod)), in: in, out: out, rank: a.Config.RankOf(l, mod)}
		if lm.a == nil || lm.b == nil {
			return lw, fmt.Errorf("adapter lacks %s", lora.AName(l, mod))
		}
		lw.lo[mi] = lm
	}
	if !hy.linear {
		return lw, nil
	}
	d, nv := c.HiddenSize, h.ValueHeads
	for _, p := range []struct {
		dst   *devmem.Block
		name  string
		f32   bool
		shape []int
	}{
		{&hy.bproj, "linear_attn.in_proj_b.weight", false, []int{nv, d}},
		{&hy.aproj, "linear_attn.in_proj_a.weight", false, []int{nv, d}},
		{&hy.conv, "linear_attn.conv1d.weight", true, []int{h.ConvDim(), 1, h.ConvKernel}},
		{&hy.aLog, "linear_attn.A_log", true, []int{nv}},
		{&hy.dtBias, "linear_attn.dt_bias", true, []int{nv}},
		{&hy.gnormW, "linear_attn.norm.weight", true, []int{h.ValueDim}},
	} {
		if *p.dst, err = u.getAs(ln(p.name), p.f32, nil, p.shape...); err != nil {
			return lw, err
		}
	}
	return lw, nil
}
