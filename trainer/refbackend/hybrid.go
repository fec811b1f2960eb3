package refbackend

import (
	"math"

	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/model"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// hybridWeights are the extra frozen weights of a Qwen3.5/3.6 layer.
type hybridWeights struct {
	linear       bool
	conv         []float64 // [C, K]
	aLog, dtBias []float64
	gNorm        []float64 // gated RMSNorm weight (plain form)
}

// onePlus is Qwen3.5's RMSNorm weight form: the file stores w, the norm
// multiplies by 1 + w.
func onePlus(v []float32) []float64 {
	out := f64(v)
	for i := range out {
		out[i]++
	}
	return out
}

// newHybridLayer reads layer l of a hybrid model.
func newHybridLayer(m *model.Model, l int) layerWeights {
	c := m.Config
	get := func(s string) *model.Tensor { return m.Get(model.LayerName(l, s)) }
	lw := layerWeights{
		inNorm:   onePlus(get("input_layernorm.weight").Data),
		postNorm: onePlus(get("post_attention_layernorm.weight").Data),
		w:        map[string]*tensor.Dense{},
		hy:       &hybridWeights{linear: c.IsLinear(l)},
	}
	for _, mod := range lora.AllModules() {
		if lora.Exists(c, l, mod) {
			lw.w[mod] = transposed(get(lora.ModulePath(mod) + ".weight"))
		}
	}
	if !lw.hy.linear {
		lw.qNorm = onePlus(get("self_attn.q_norm.weight").Data)
		lw.kNorm = onePlus(get("self_attn.k_norm.weight").Data)
		return lw
	}
	lw.w["in_proj_b"] = transposed(get("linear_attn.in_proj_b.weight"))
	lw.w["in_proj_a"] = transposed(get("linear_attn.in_proj_a.weight"))
	lw.hy.conv = f64(get("linear_attn.conv1d.weight").Data)
	lw.hy.aLog = f64(get("linear_attn.A_log").Data)
	lw.hy.dtBias = f64(get("linear_attn.dt_bias").Data)
	lw.hy.gNorm = f64(get("linear_attn.norm.weight").Data)
	return lw
}

// hybridMixer is the token mixer of layer l on the normed input x: gated
// full attention or Gated DeltaNet.
func (gr *graph) hybridMixer(x *G.Node, l int, rq, rk *rope) *G.Node {
	c := gr.b.cfg
	lw := gr.b.layers[l]
	if lw.hy.linear {
		return gr.deltaNet(x, l)
	}
	hd, nh := c.HeadDim, c.NumHeads
	qg := gr.linear(x, l, "q_proj", nil)
	q, gate := qg, (*G.Node)(nil)
	if c.Hybrid.OutputGate {
		q = gr.apply(&cols{inW: 2 * nh * hd, groups: nh, stride: 2 * hd, off: 0, width: hd}, 2, qg)
		gate = gr.apply(&cols{inW: 2 * nh * hd, groups: nh, stride: 2 * hd, off: hd, width: hd}, 2, qg)
	}
	k := gr.linear(x, l, "k_proj", nil)
	v := gr.linear(x, l, "v_proj", nil)
	q = gr.apply(&rmsNorm{width: hd, w: lw.qNorm, eps: c.RMSNormEps}, 2, q)
	k = gr.apply(&rmsNorm{width: hd, w: lw.kNorm, eps: c.RMSNormEps}, 2, k)
	q, k = gr.apply(rq, 2, q), gr.apply(rk, 2, k)
	a := gr.apply(&attention{t: gr.t, nh: nh, nkv: c.NumKVHeads, hd: hd, scale: 1 / math.Sqrt(float64(hd))}, 2, q, k, v)
	if gate != nil {
		a = gr.apply(sigmoidGate{}, 2, a, gate)
	}
	return gr.linear(a, l, "o_proj", nil)
}

// deltaNet is the Gated DeltaNet mixer: in_proj_qkv → causal conv + SiLU →
// L2-normed q, k and v → gated delta rule (decay from in_proj_a, β from
// in_proj_b) → gated RMSNorm with in_proj_z → out_proj.
func (gr *graph) deltaNet(x *G.Node, l int) *G.Node {
	c := gr.b.cfg
	h := c.Hybrid
	hy := gr.b.layers[l].hy
	kw, vw, cd := h.LinearKeyWidth(), h.LinearValueWidth(), h.ConvDim()
	qkv := gr.linear(x, l, "in_proj_qkv", nil)
	z := gr.linear(x, l, "in_proj_z", nil)
	b := gr.linear(x, l, "in_proj_b", nil)
	a := gr.linear(x, l, "in_proj_a", nil)
	conv := gr.apply(&causalConv{c: cd, k: h.ConvKernel, w: hy.conv}, 2, qkv)
	q := gr.apply(&cols{inW: cd, groups: 1, stride: cd, off: 0, width: kw}, 2, conv)
	k := gr.apply(&cols{inW: cd, groups: 1, stride: cd, off: kw, width: kw}, 2, conv)
	v := gr.apply(&cols{inW: cd, groups: 1, stride: cd, off: 2 * kw, width: vw}, 2, conv)
	q = gr.apply(&l2Norm{width: h.KeyDim, eps: 1e-6}, 2, q)
	k = gr.apply(&l2Norm{width: h.KeyDim, eps: 1e-6}, 2, k)
	p := GDN{T: gr.t, KeyHeads: h.KeyHeads, ValueHeads: h.ValueHeads, KeyDim: h.KeyDim, ValueDim: h.ValueDim,
		Scale: 1 / math.Sqrt(float64(h.KeyDim))}
	o := gr.apply(&deltaRule{p: p, aLog: hy.aLog, dtBias: hy.dtBias}, 2, q, k, v, a, b)
	o = gr.apply(&gatedNorm{width: h.ValueDim, w: hy.gNorm, eps: c.RMSNormEps}, 2, o, z)
	return gr.linear(o, l, "out_proj", nil)
}
