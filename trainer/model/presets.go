package model

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
)

//go:embed assets/tokenizer.json.gz
var tokenizerGz []byte

//go:embed assets/tokenizer_config.json
var tokenizerConfig []byte

// Presets are random-model configurations for tests and demos. "tiny" keeps
// the full Qwen3 vocabulary so the real tokenizer works with it; "micro" has a
// 256-token vocabulary for fast training tests on synthetic token ids.
func Presets() map[string]*Config {
	eos := 151645
	return map[string]*Config{
		"tiny": {
			Arch: Qwen3, Architectures: []string{"Qwen3ForCausalLM"}, ModelType: "qwen3",
			VocabSize: 151936, HiddenSize: 64, IntermediateSize: 128, NumLayers: 2,
			NumHeads: 4, NumKVHeads: 2, HeadDim: 16, RMSNormEps: 1e-6, RopeTheta: 1000000,
			TieWordEmbeddings: true, MaxPositions: 40960, EOSTokenID: eos,
		},
		"micro": {
			Arch: Qwen3, Architectures: []string{"Qwen3ForCausalLM"}, ModelType: "qwen3",
			VocabSize: 256, HiddenSize: 32, IntermediateSize: 64, NumLayers: 2,
			NumHeads: 4, NumKVHeads: 2, HeadDim: 8, RMSNormEps: 1e-6, RopeTheta: 10000,
			TieWordEmbeddings: false, MaxPositions: 4096,
		},
		// hybrid-tiny and hybrid-micro are Qwen3.5/3.6 hybrids (three Gated
		// DeltaNet layers, then one gated full-attention layer) in the official
		// nested layout; hybrid-tiny keeps the Qwen3 vocabulary and tokenizer.
		"hybrid-tiny": {
			Arch: Qwen35, Architectures: []string{"Qwen3_5ForConditionalGeneration"}, ModelType: "qwen3_5",
			VocabSize: 151936, HiddenSize: 64, IntermediateSize: 128, NumLayers: 4,
			NumHeads: 4, NumKVHeads: 2, HeadDim: 16, RMSNormEps: 1e-6, RopeTheta: 10000000,
			MaxPositions: 40960, EOSTokenID: eos, Hybrid: hybridPreset(4, 2, 4, 16, 16),
		},
		"hybrid-micro": {
			Arch: Qwen35, Architectures: []string{"Qwen3_5ForConditionalGeneration"}, ModelType: "qwen3_5",
			VocabSize: 256, HiddenSize: 32, IntermediateSize: 64, NumLayers: 4,
			NumHeads: 2, NumKVHeads: 1, HeadDim: 16, RMSNormEps: 1e-6, RopeTheta: 10000000,
			MaxPositions: 4096, Hybrid: hybridPreset(4, 2, 4, 8, 8),
		},
	}
}

// hybridPreset has full attention every fourth layer, a width-4 conv,
// rotary on a quarter of head_dim 16 (mrope sections over its 2 frequencies).
func hybridPreset(layers, kh, vh, kd, vd int) *Hybrid {
	h := &Hybrid{ConvKernel: 4, KeyHeads: kh, ValueHeads: vh, KeyDim: kd, ValueDim: vd,
		RotaryDim: 4, OutputGate: true, MRopeSection: []int{1, 1, 0}, Nested: true}
	return HybridLayers(h, layers)
}

// HybridLayers returns a copy of h with layer_types for n layers, full
// attention every fourth (full_attention_interval 4).
func HybridLayers(h *Hybrid, n int) *Hybrid {
	c := *h
	c.LayerTypes = nil
	for l := 0; l < n; l++ {
		if (l+1)%4 == 0 {
			c.LayerTypes = append(c.LayerTypes, FullAttention)
		} else {
			c.LayerTypes = append(c.LayerTypes, LinearAttention)
		}
	}
	return &c
}

// Preset returns a copy of a named preset.
func Preset(name string) (*Config, error) {
	p, ok := Presets()[name]
	if !ok {
		var names []string
		for n := range Presets() {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("unknown model preset %q (have %v)", name, names)
	}
	return p, nil
}

// TokenizerFiles are copied with a model folder.
var TokenizerFiles = []string{"tokenizer.json", "tokenizer_config.json", "vocab.json", "merges.txt", "generation_config.json", "special_tokens_map.json", "added_tokens.json"}

// WriteTokenizer writes the Qwen3 tokenizer files embedded in this package.
func WriteTokenizer(dir string) error {
	zr, err := gzip.NewReader(bytes.NewReader(tokenizerGz))
	if err != nil {
		return fmt.Errorf("open embedded tokenizer: %w", err)
	}
	tok, err := io.ReadAll(zr)
	if err != nil {
		return fmt.Errorf("read embedded tokenizer: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), tok, 0o644); err != nil {
		return fmt.Errorf("write tokenizer: %w", err)
	}
	return os.WriteFile(filepath.Join(dir, "tokenizer_config.json"), tokenizerConfig, 0o644)
}

// CopyTokenizer copies whichever TokenizerFiles exist in src to dst. Files
// are read without following symlinks.
func CopyTokenizer(src, dst string) error {
	for _, n := range TokenizerFiles {
		p := filepath.Join(src, n)
		st, err := os.Lstat(p)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("read %s: %w", p, err)
		}
		if err := os.WriteFile(filepath.Join(dst, n), b, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", n, err)
		}
	}
	return nil
}
