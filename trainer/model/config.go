// Package model reads and writes Qwen2, Qwen2.5 and Qwen3 dense decoder
// folders and Qwen3.5/3.6 hybrid ones (Gated DeltaNet + gated attention,
// Qwen3_5ForConditionalGeneration's nested text_config; hybrid.go) in Hugging
// Face layout: config.json, safetensors weights and the tokenizer files, with
// clear errors for anything the trainer cannot run.
package model

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mass-dev/mass/errclass"
)

// Error classes of model folders: a model the trainer cannot run is
// ErrUnsupported (class errclass.ErrInvalid), one too big for the memory it
// would run in ErrDoesNotFit (errclass.ErrTooLarge); a folder without
// config.json is errclass.ErrNotFound.
var (
	ErrUnsupported = errclass.New("unsupported model", errclass.ErrInvalid)
	ErrDoesNotFit  = errclass.New("model does not fit", errclass.ErrTooLarge)
)

// Arch is the decoder family.
type Arch string

// Supported families. Qwen2.5 uses the Qwen2 architecture.
const (
	Qwen2 Arch = "qwen2"
	Qwen3 Arch = "qwen3"
	// Qwen35 is the Qwen3.5/3.6 dense hybrid decoder (model_type qwen3_5 or
	// qwen3_5_text); Config.Hybrid holds its extra fields.
	Qwen35 Arch = "qwen3_5"
)

// Config is the subset of config.json the trainer needs, normalized.
type Config struct {
	Arch              Arch     `json:"-"`
	Architectures     []string `json:"architectures"`
	ModelType         string   `json:"model_type"`
	VocabSize         int      `json:"vocab_size"`
	HiddenSize        int      `json:"hidden_size"`
	IntermediateSize  int      `json:"intermediate_size"`
	NumLayers         int      `json:"num_hidden_layers"`
	NumHeads          int      `json:"num_attention_heads"`
	NumKVHeads        int      `json:"num_key_value_heads"`
	HeadDim           int      `json:"head_dim"`
	RMSNormEps        float64  `json:"rms_norm_eps"`
	RopeTheta         float64  `json:"rope_theta"`
	TieWordEmbeddings bool     `json:"tie_word_embeddings"`
	AttentionBias     bool     `json:"attention_bias"`
	MaxPositions      int      `json:"max_position_embeddings"`
	TorchDType        string   `json:"torch_dtype"`
	BOSTokenID        *int     `json:"bos_token_id,omitempty"`
	EOSTokenID        any      `json:"eos_token_id,omitempty"`
	HiddenAct         string   `json:"hidden_act"`
	// Hybrid is set for Qwen35 only.
	Hybrid *Hybrid `json:"-"`
}

type rawConfig struct {
	Config
	RopeParameters *struct {
		RopeTheta        float64 `json:"rope_theta"`
		RopeType         string  `json:"rope_type"`
		PartialRotary    float64 `json:"partial_rotary_factor"`
		MRopeSection     []int   `json:"mrope_section"`
		MRopeInterleaved bool    `json:"mrope_interleaved"`
	} `json:"rope_parameters"`
	RopeScaling *struct {
		RopeType string `json:"rope_type"`
		Type     string `json:"type"`
	} `json:"rope_scaling"`
	UseSlidingWindow bool            `json:"use_sliding_window"`
	DType            string          `json:"dtype"`
	TextConfig       json.RawMessage `json:"text_config"`
	hybridFields
}

// ParseConfig parses and validates config.json text.
func ParseConfig(b []byte) (*Config, error) {
	var rc rawConfig
	rc.HeadDim = -1
	if err := json.Unmarshal(b, &rc); err != nil {
		return nil, fmt.Errorf("parse config.json: %w", err)
	}
	if isHybridType(rc.ModelType) {
		return parseHybrid(b)
	}
	c := rc.Config
	switch c.ModelType {
	case "qwen2":
		c.Arch = Qwen2
		c.AttentionBias = true
	case "qwen3":
		c.Arch = Qwen3
	default:
		return nil, fmt.Errorf("%w: model_type %q (architectures %v); this trainer runs qwen2, qwen2.5 and qwen3 dense decoders and the qwen3.5/3.6 dense hybrid", ErrUnsupported, c.ModelType, c.Architectures)
	}
	return finishConfig(&rc, c)
}

// finishConfig applies defaults and the checks shared by every family.
func finishConfig(rc *rawConfig, c Config) (*Config, error) {
	if rc.RopeParameters != nil {
		if rc.RopeParameters.RopeType != "" && rc.RopeParameters.RopeType != "default" {
			return nil, fmt.Errorf("%w: rope_type %q (only default RoPE is implemented)", ErrUnsupported, rc.RopeParameters.RopeType)
		}
		if c.RopeTheta == 0 {
			c.RopeTheta = rc.RopeParameters.RopeTheta
		}
	}
	if rs := rc.RopeScaling; rs != nil {
		t := rs.RopeType
		if t == "" {
			t = rs.Type
		}
		if t != "" && t != "default" {
			return nil, fmt.Errorf("%w: rope_scaling %q (only default RoPE is implemented)", ErrUnsupported, t)
		}
	}
	if rc.UseSlidingWindow {
		return nil, fmt.Errorf("%w: sliding-window attention", ErrUnsupported)
	}
	if c.TorchDType == "" {
		c.TorchDType = rc.DType
	}
	if c.RopeTheta == 0 {
		c.RopeTheta = 10000
	}
	if c.RMSNormEps == 0 {
		c.RMSNormEps = 1e-6
	}
	if c.NumKVHeads == 0 {
		c.NumKVHeads = c.NumHeads
	}
	if c.HiddenAct != "" && c.HiddenAct != "silu" {
		return nil, fmt.Errorf("%w: hidden_act %q (want silu)", ErrUnsupported, c.HiddenAct)
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"vocab_size", c.VocabSize}, {"hidden_size", c.HiddenSize}, {"intermediate_size", c.IntermediateSize},
		{"num_hidden_layers", c.NumLayers}, {"num_attention_heads", c.NumHeads}, {"num_key_value_heads", c.NumKVHeads}} {
		if f.v <= 0 {
			return nil, fmt.Errorf("%w: config %s = %d, must be positive", ErrUnsupported, f.name, f.v)
		}
	}
	if c.HeadDim <= 0 {
		if c.HiddenSize%c.NumHeads != 0 {
			return nil, fmt.Errorf("%w: hidden_size %d not divisible by num_attention_heads %d and no head_dim", ErrUnsupported, c.HiddenSize, c.NumHeads)
		}
		c.HeadDim = c.HiddenSize / c.NumHeads
	}
	if c.HeadDim%2 != 0 {
		return nil, fmt.Errorf("%w: head_dim %d must be even for RoPE", ErrUnsupported, c.HeadDim)
	}
	if c.NumHeads%c.NumKVHeads != 0 {
		return nil, fmt.Errorf("%w: num_attention_heads %d not a multiple of num_key_value_heads %d", ErrUnsupported, c.NumHeads, c.NumKVHeads)
	}
	return &c, nil
}

// LoadConfig reads dir/config.json.
func LoadConfig(dir string) (*Config, error) {
	b, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		return nil, fmt.Errorf("read model config: %w", errclass.Missing(err))
	}
	c, err := ParseConfig(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return c, nil
}

// QDim is the width of the query projection output.
func (c *Config) QDim() int { return c.NumHeads * c.HeadDim }

// KVDim is the width of the key and value projection outputs.
func (c *Config) KVDim() int { return c.NumKVHeads * c.HeadDim }

// JSON renders config.json for this configuration.
func (c *Config) JSON() ([]byte, error) {
	if c.Hybrid != nil {
		return c.hybridJSON()
	}
	m := map[string]any{
		"architectures":           c.Architectures,
		"model_type":              c.ModelType,
		"vocab_size":              c.VocabSize,
		"hidden_size":             c.HiddenSize,
		"intermediate_size":       c.IntermediateSize,
		"num_hidden_layers":       c.NumLayers,
		"num_attention_heads":     c.NumHeads,
		"num_key_value_heads":     c.NumKVHeads,
		"head_dim":                c.HeadDim,
		"rms_norm_eps":            c.RMSNormEps,
		"rope_theta":              c.RopeTheta,
		"tie_word_embeddings":     c.TieWordEmbeddings,
		"attention_bias":          c.AttentionBias,
		"max_position_embeddings": c.MaxPositions,
		"torch_dtype":             c.TorchDType,
		"hidden_act":              "silu",
	}
	if c.BOSTokenID != nil {
		m["bos_token_id"] = *c.BOSTokenID
	}
	if c.EOSTokenID != nil {
		m["eos_token_id"] = c.EOSTokenID
	}
	return json.MarshalIndent(m, "", "  ")
}
