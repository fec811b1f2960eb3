package model

import (
	"encoding/json"
	"fmt"
	"slices"
)

// Layer kinds of a hybrid decoder (config.json layer_types).
const (
	LinearAttention = "linear_attention"
	FullAttention   = "full_attention"
)

// Hybrid holds the Qwen3.5/3.6 fields of a Config: which layers are Gated
// DeltaNet (linear attention) and which gated full attention, and the
// DeltaNet shapes.
type Hybrid struct {
	LayerTypes []string
	ConvKernel int // linear_conv_kernel_dim: width of the depthwise causal conv
	KeyHeads   int // linear_num_key_heads
	ValueHeads int // linear_num_value_heads
	KeyDim     int // linear_key_head_dim
	ValueDim   int // linear_value_head_dim
	// RotaryDim is head_dim × partial_rotary_factor: the leading dims of each
	// full-attention head that RoPE rotates. For text the three mrope sections
	// see the same position, so mrope equals plain RoPE on RotaryDim dims.
	RotaryDim    int
	OutputGate   bool  // attn_output_gate: q_proj emits query and gate per head
	MRopeSection []int // kept for config.json
	// Nested is true for Qwen3_5ForConditionalGeneration folders (text_config,
	// tensors under model.language_model.), false for text-only qwen3_5_text.
	Nested bool
	// Raw is the config.json read, written back (dtype updated) on save, so
	// that vision_config and fields this trainer does not use survive.
	Raw map[string]any
}

// hybridFields are the text_config keys of the hybrid family.
type hybridFields struct {
	LayerTypes            []string `json:"layer_types"`
	FullAttentionInterval int      `json:"full_attention_interval"`
	LinearConvKernelDim   int      `json:"linear_conv_kernel_dim"`
	LinearKeyHeadDim      int      `json:"linear_key_head_dim"`
	LinearValueHeadDim    int      `json:"linear_value_head_dim"`
	LinearNumKeyHeads     int      `json:"linear_num_key_heads"`
	LinearNumValueHeads   int      `json:"linear_num_value_heads"`
	AttnOutputGate        *bool    `json:"attn_output_gate"`
	PartialRotaryFactor   float64  `json:"partial_rotary_factor"`
	NumExperts            int      `json:"num_experts"`
}

func isHybridType(mt string) bool {
	switch mt {
	case "qwen3_5", "qwen3_5_text", "qwen3_5_moe", "qwen3_5_moe_text", "qwen3_next":
		return true
	}
	return false
}

func refuseMoE(mt string) error {
	return fmt.Errorf("%w: model_type %q is a mixture-of-experts hybrid; this trainer runs the dense Qwen3.5/3.6 hybrid (qwen3_5 / qwen3_5_text) only", ErrUnsupported, mt)
}

// parseHybrid reads a qwen3_5 (nested text_config) or qwen3_5_text config.
func parseHybrid(b []byte) (*Config, error) {
	var outer map[string]any
	if err := json.Unmarshal(b, &outer); err != nil {
		return nil, fmt.Errorf("parse config.json: %w", err)
	}
	mt, _ := outer["model_type"].(string)
	text, nested := b, false
	switch mt {
	case "qwen3_5":
		tc, ok := outer["text_config"].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%w: qwen3_5 config without a text_config object", ErrUnsupported)
		}
		if tm, _ := tc["model_type"].(string); tm != "qwen3_5_text" {
			if tm == "qwen3_5_moe_text" {
				return nil, refuseMoE(tm)
			}
			return nil, fmt.Errorf("%w: qwen3_5 text_config model_type %q (want qwen3_5_text)", ErrUnsupported, tm)
		}
		text, _ = json.Marshal(tc)
		nested = true
	case "qwen3_5_text":
	default:
		return nil, refuseMoE(mt)
	}
	var rc rawConfig
	rc.HeadDim = -1
	if err := json.Unmarshal(text, &rc); err != nil {
		return nil, fmt.Errorf("parse text_config: %w", err)
	}
	if rc.NumExperts > 0 {
		return nil, fmt.Errorf("%w: text_config has num_experts %d; %v", ErrUnsupported, rc.NumExperts, refuseMoE(mt))
	}
	c := rc.Config
	c.Arch = Qwen35
	if nested {
		c.Architectures = nil
		if a, ok := outer["architectures"].([]any); ok {
			for _, x := range a {
				s, _ := x.(string)
				c.Architectures = append(c.Architectures, s)
			}
		}
		if t, ok := outer["tie_word_embeddings"].(bool); ok {
			c.TieWordEmbeddings = c.TieWordEmbeddings || t
		}
		c.ModelType = "qwen3_5"
	}
	h, err := hybridOf(&rc)
	if err != nil {
		return nil, err
	}
	h.Nested, h.Raw = nested, outer
	c.Hybrid = h
	cfg, err := finishConfig(&rc, c)
	if err != nil {
		return nil, err
	}
	return cfg, cfg.checkHybrid()
}

func hybridOf(rc *rawConfig) (*Hybrid, error) {
	f := rc.hybridFields
	h := &Hybrid{LayerTypes: f.LayerTypes, ConvKernel: f.LinearConvKernelDim, KeyHeads: f.LinearNumKeyHeads,
		ValueHeads: f.LinearNumValueHeads, KeyDim: f.LinearKeyHeadDim, ValueDim: f.LinearValueHeadDim, OutputGate: true}
	if f.AttnOutputGate != nil {
		h.OutputGate = *f.AttnOutputGate
	}
	partial := f.PartialRotaryFactor
	if rp := rc.RopeParameters; rp != nil {
		if rp.PartialRotary > 0 {
			partial = rp.PartialRotary
		}
		h.MRopeSection = rp.MRopeSection
	}
	if partial == 0 {
		partial = 1
	}
	hd := rc.HeadDim
	if hd <= 0 {
		return nil, fmt.Errorf("%w: hybrid config needs head_dim", ErrUnsupported)
	}
	h.RotaryDim = int(float64(hd) * partial)
	if len(h.LayerTypes) == 0 {
		iv := f.FullAttentionInterval
		if iv <= 0 {
			iv = 4
		}
		for l := 0; l < rc.NumLayers; l++ {
			if (l+1)%iv == 0 {
				h.LayerTypes = append(h.LayerTypes, FullAttention)
			} else {
				h.LayerTypes = append(h.LayerTypes, LinearAttention)
			}
		}
	}
	if h.ConvKernel == 0 {
		h.ConvKernel = 4
	}
	return h, nil
}

func (c *Config) checkHybrid() error {
	h := c.Hybrid
	if len(h.LayerTypes) != c.NumLayers {
		return fmt.Errorf("%w: layer_types has %d entries for %d layers", ErrUnsupported, len(h.LayerTypes), c.NumLayers)
	}
	for i, t := range h.LayerTypes {
		if t != LinearAttention && t != FullAttention {
			return fmt.Errorf("%w: layer_types[%d] = %q (want linear_attention or full_attention)", ErrUnsupported, i, t)
		}
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"linear_num_key_heads", h.KeyHeads}, {"linear_num_value_heads", h.ValueHeads}, {"linear_key_head_dim", h.KeyDim},
		{"linear_value_head_dim", h.ValueDim}, {"linear_conv_kernel_dim", h.ConvKernel}} {
		if f.v <= 0 {
			return fmt.Errorf("%w: config %s = %d, must be positive", ErrUnsupported, f.name, f.v)
		}
	}
	switch {
	case h.ValueHeads%h.KeyHeads != 0:
		return fmt.Errorf("%w: linear_num_value_heads %d not a multiple of linear_num_key_heads %d", ErrUnsupported, h.ValueHeads, h.KeyHeads)
	case h.RotaryDim <= 0 || h.RotaryDim%2 != 0 || h.RotaryDim > c.HeadDim:
		return fmt.Errorf("%w: rotary dim %d (head_dim × partial_rotary_factor) must be even and within head_dim %d", ErrUnsupported, h.RotaryDim, c.HeadDim)
	case c.AttentionBias:
		return fmt.Errorf("%w: attention_bias in a hybrid config", ErrUnsupported)
	}
	return nil
}

// IsLinear reports whether layer l is a Gated DeltaNet layer.
func (c *Config) IsLinear(l int) bool {
	return c.Hybrid != nil && c.Hybrid.LayerTypes[l] == LinearAttention
}

// LinearKeyWidth is linear_num_key_heads × linear_key_head_dim.
func (h *Hybrid) LinearKeyWidth() int { return h.KeyHeads * h.KeyDim }

// LinearValueWidth is linear_num_value_heads × linear_value_head_dim.
func (h *Hybrid) LinearValueWidth() int { return h.ValueHeads * h.ValueDim }

// ConvDim is the width of in_proj_qkv's output and of the causal conv.
func (h *Hybrid) ConvDim() int { return 2*h.LinearKeyWidth() + h.LinearValueWidth() }

// QProjOut is the q_proj output width: doubled by the output gate.
func (c *Config) QProjOut() int {
	if c.Hybrid != nil && c.Hybrid.OutputGate {
		return 2 * c.QDim()
	}
	return c.QDim()
}

func (c *Config) hybridExpected() map[string][]int {
	h := c.Hybrid
	d, f := c.HiddenSize, c.IntermediateSize
	m := map[string][]int{
		"model.embed_tokens.weight": {c.VocabSize, d},
		"model.norm.weight":         {d},
	}
	if !c.TieWordEmbeddings {
		m["lm_head.weight"] = []int{c.VocabSize, d}
	}
	for i := 0; i < c.NumLayers; i++ {
		l := func(s string, shape ...int) { m[LayerName(i, s)] = shape }
		l("input_layernorm.weight", d)
		l("post_attention_layernorm.weight", d)
		l("mlp.gate_proj.weight", f, d)
		l("mlp.up_proj.weight", f, d)
		l("mlp.down_proj.weight", d, f)
		if !c.IsLinear(i) {
			l("self_attn.q_proj.weight", c.QProjOut(), d)
			l("self_attn.k_proj.weight", c.KVDim(), d)
			l("self_attn.v_proj.weight", c.KVDim(), d)
			l("self_attn.o_proj.weight", d, c.QDim())
			l("self_attn.q_norm.weight", c.HeadDim)
			l("self_attn.k_norm.weight", c.HeadDim)
			continue
		}
		l("linear_attn.in_proj_qkv.weight", h.ConvDim(), d)
		l("linear_attn.in_proj_z.weight", h.LinearValueWidth(), d)
		l("linear_attn.in_proj_b.weight", h.ValueHeads, d)
		l("linear_attn.in_proj_a.weight", h.ValueHeads, d)
		l("linear_attn.conv1d.weight", h.ConvDim(), 1, h.ConvKernel)
		l("linear_attn.A_log", h.ValueHeads)
		l("linear_attn.dt_bias", h.ValueHeads)
		l("linear_attn.norm.weight", h.ValueDim)
		l("linear_attn.out_proj.weight", d, h.LinearValueWidth())
	}
	return m
}

// languagePrefix is where a nested checkpoint keeps the text decoder.
const languagePrefix = "model.language_model."

// OfficialName maps a tensor name as this package keeps it (model.layers.N…,
// model.embed_tokens…, lm_head…) to the checkpoint's: under
// model.language_model. for a nested Qwen3.5/3.6 folder, unchanged otherwise.
func (c *Config) OfficialName(name string) string {
	if c.Hybrid == nil || !c.Hybrid.Nested || len(name) < 6 || name[:6] != "model." {
		return name
	}
	return languagePrefix + name[6:]
}

// hybridJSON renders the official layout: the Raw config read, or, for a
// preset, a nested Qwen3_5ForConditionalGeneration config.
func (c *Config) hybridJSON() ([]byte, error) {
	h := c.Hybrid
	var out map[string]any
	if h.Raw != nil {
		b, err := json.Marshal(h.Raw)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, &out); err != nil {
			return nil, err
		}
	} else {
		out = c.hybridTextJSON()
		if h.Nested {
			out = map[string]any{"architectures": c.Architectures, "model_type": "qwen3_5",
				"tie_word_embeddings": c.TieWordEmbeddings, "text_config": out}
		}
	}
	if c.TorchDType != "" {
		out["torch_dtype"], out["dtype"] = c.TorchDType, c.TorchDType
		if tc, ok := out["text_config"].(map[string]any); ok {
			tc["dtype"] = c.TorchDType
		}
	}
	return json.MarshalIndent(out, "", "  ")
}

func (c *Config) hybridTextJSON() map[string]any {
	h := c.Hybrid
	rope := map[string]any{"rope_type": "default", "rope_theta": c.RopeTheta,
		"partial_rotary_factor": float64(h.RotaryDim) / float64(c.HeadDim)}
	if h.MRopeSection != nil {
		rope["mrope_section"], rope["mrope_interleaved"] = h.MRopeSection, true
	}
	m := map[string]any{
		"model_type": "qwen3_5_text", "vocab_size": c.VocabSize, "hidden_size": c.HiddenSize,
		"intermediate_size": c.IntermediateSize, "num_hidden_layers": c.NumLayers,
		"num_attention_heads": c.NumHeads, "num_key_value_heads": c.NumKVHeads, "head_dim": c.HeadDim,
		"rms_norm_eps": c.RMSNormEps, "tie_word_embeddings": c.TieWordEmbeddings, "attention_bias": false,
		"max_position_embeddings": c.MaxPositions, "hidden_act": "silu", "attn_output_gate": h.OutputGate,
		"layer_types": slices.Clone(h.LayerTypes), "linear_conv_kernel_dim": h.ConvKernel,
		"linear_num_key_heads": h.KeyHeads, "linear_num_value_heads": h.ValueHeads,
		"linear_key_head_dim": h.KeyDim, "linear_value_head_dim": h.ValueDim,
		"partial_rotary_factor": rope["partial_rotary_factor"], "rope_parameters": rope,
	}
	if !h.Nested {
		m["architectures"] = c.Architectures
	}
	if c.EOSTokenID != nil {
		m["eos_token_id"] = c.EOSTokenID
	}
	return m
}
