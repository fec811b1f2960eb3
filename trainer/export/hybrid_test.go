package export

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/model"
	"github.com/mass-dev/mass/trainer/safetensors"
)

func trainedHybrid(t *testing.T) (*model.Model, *lora.Adapter) {
	t.Helper()
	mc, err := model.Preset("hybrid-micro")
	if err != nil {
		t.Fatal(err)
	}
	a, err := lora.New(lora.Config{Rank: 4, Alpha: 8, Targets: lora.HybridTargets()}, mc, 4)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 5))
	for _, p := range a.Params {
		for i := range p.Data {
			p.Data[i] = float32(rng.NormFloat64() * 0.1)
		}
	}
	return model.NewRandom(mc, 3), a
}

// TestHybridAdapterLayout: a hybrid adapter is written as PEFT and vLLM load
// Qwen3_5ForConditionalGeneration adapters (keys under
// base_model.model.model.language_model.layers, the ten targets listed) and
// reads back to the same values.
func TestHybridAdapterLayout(t *testing.T) {
	m, a := trainedHybrid(t)
	dir := t.TempDir()
	if err := WriteAdapter(dir, a, "Qwen/Qwen3.6-27B"); err != nil {
		t.Fatal(err)
	}
	var ac AdapterConfig
	b, _ := os.ReadFile(filepath.Join(dir, AdapterConfigFile))
	if err := json.Unmarshal(b, &ac); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ac.TargetModules, lora.HybridTargets()) {
		t.Errorf("target_modules %v", ac.TargetModules)
	}
	f, err := safetensors.Open(filepath.Join(dir, AdapterWeightsFile))
	if err != nil {
		t.Fatal(err)
	}
	names := f.Header.Names()
	f.Close()
	for _, n := range names {
		if !strings.HasPrefix(n, "base_model.model.model.language_model.layers.") {
			t.Fatalf("adapter key %s is not under model.language_model", n)
		}
	}
	if !slices.Contains(names, "base_model.model.model.language_model.layers.0.linear_attn.in_proj_qkv.lora_A.weight") ||
		!slices.Contains(names, "base_model.model.model.language_model.layers.3.self_attn.q_proj.lora_B.weight") ||
		slices.Contains(names, "base_model.model.model.language_model.layers.0.self_attn.q_proj.lora_A.weight") {
		t.Errorf("adapter keys %v", names)
	}
	back, err := ReadAdapter(dir, m.Config)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range a.Params {
		if !slices.Equal(back.Params[i].Data, p.Data) || back.Params[i].Name != p.Name {
			t.Fatalf("%s differs after the round trip", p.Name)
		}
	}
}

// TestHybridMergedFP8Layout: the block-FP8 merged folder keeps the official
// names and leaves in_proj_b/in_proj_a (one output per head) unquantized.
func TestHybridMergedFP8Layout(t *testing.T) {
	m, a := trainedHybrid(t)
	dir := t.TempDir()
	if err := WriteMerged(dir, m, a, MergedOptions{FP8: true}); err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	b, _ := os.ReadFile(filepath.Join(dir, "config.json"))
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	qc, _ := cfg["quantization_config"].(map[string]any)
	skipped, _ := qc["modules_to_not_convert"].([]any)
	if cfg["model_type"] != "qwen3_5" || !slices.Contains(skipped, any("model.language_model.layers.0.linear_attn.in_proj_b")) {
		t.Fatalf("config %s", b)
	}
	st, err := safetensors.OpenModel(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, n := range st.Names() {
		if strings.HasPrefix(n, "model.layers.") {
			t.Fatalf("tensor %s not under model.language_model", n)
		}
	}
	if !st.Has("model.language_model.layers.0.linear_attn.conv1d.weight") || !st.Has("lm_head.weight") {
		t.Errorf("tensors %v", st.Names())
	}
}
