package fast

import (
	"fmt"

	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/model"
)

// hybridLayer is the Qwen3.5/3.6 part of a layer: the gated attention's
// extras or the Gated DeltaNet's weights.
type hybridLayer struct {
	linear                 bool
	qkv, z, bproj, aproj   proj
	out                    proj
	conv                   []float32 // [C, K]
	aLog, dtBias, gateNorm []float32
}

// onePlus returns 1 + w: Qwen3.5 stores RMSNorm weights in that form.
func onePlus(w []float32) []float32 {
	out := make([]float32, len(w))
	for i, v := range w {
		out[i] = 1 + v
	}
	return out
}

// newProj wraps one projection of layer l with its LoRA, if adapted.
func newProj(m *model.Model, a *lora.Adapter, l int, module, path string, in, out int) (proj, error) {
	p := proj{module: module, in: in, out: out}
	p.w, p.wh = matOf(m.Get(model.LayerName(l, path+".weight")))
	if a.Config.Has(module) && lora.Exists(m.Config, l, module) {
		p.a, p.b = a.Param(lora.AName(l, module)), a.Param(lora.BName(l, module))
		p.scaling = float32(a.Config.ScalingOf(l, module))
		if p.a == nil || p.b == nil {
			return p, fmt.Errorf("adapter lacks layer %d %s", l, module)
		}
	}
	return p, nil
}

// newHybridLayer reads layer l of a hybrid model.
func newHybridLayer(m *model.Model, a *lora.Adapter, l int) (layer, error) {
	c := m.Config
	h := c.Hybrid
	get := func(s string) []float32 { return m.Get(model.LayerName(l, s)).Data }
	ly := layer{inNorm: onePlus(get("input_layernorm.weight")), postNorm: onePlus(get("post_attention_layernorm.weight")),
		hy: &hybridLayer{linear: c.IsLinear(l)}}
	type spec struct {
		dst     *proj
		mod     string
		in, out int
	}
	d, vw := c.HiddenSize, h.LinearValueWidth()
	specs := []spec{{&ly.gate, "gate_proj", d, c.IntermediateSize}, {&ly.up, "up_proj", d, c.IntermediateSize}, {&ly.down, "down_proj", c.IntermediateSize, d}}
	if ly.hy.linear {
		specs = append(specs, spec{&ly.hy.qkv, "in_proj_qkv", d, h.ConvDim()}, spec{&ly.hy.z, "in_proj_z", d, vw},
			spec{&ly.hy.bproj, "in_proj_b", d, h.ValueHeads}, spec{&ly.hy.aproj, "in_proj_a", d, h.ValueHeads}, spec{&ly.hy.out, "out_proj", vw, d})
	} else {
		specs = append(specs, spec{&ly.q, "q_proj", d, c.QProjOut()}, spec{&ly.k, "k_proj", d, c.KVDim()},
			spec{&ly.v, "v_proj", d, c.KVDim()}, spec{&ly.o, "o_proj", c.QDim(), d})
	}
	for _, s := range specs {
		path := lora.ModulePath(s.mod)
		if s.mod == "in_proj_b" || s.mod == "in_proj_a" {
			path = "linear_attn." + s.mod
		}
		p, err := newProj(m, a, l, s.mod, path, s.in, s.out)
		if err != nil {
			return ly, err
		}
		*s.dst = p
	}
	if !ly.hy.linear {
		ly.qNorm, ly.kNorm = onePlus(get("self_attn.q_norm.weight")), onePlus(get("self_attn.k_norm.weight"))
		return ly, nil
	}
	ly.hy.conv, ly.hy.aLog, ly.hy.dtBias = get("linear_attn.conv1d.weight"), get("linear_attn.A_log"), get("linear_attn.dt_bias")
	ly.hy.gateNorm = get("linear_attn.norm.weight")
	return ly, nil
}
