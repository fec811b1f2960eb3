package model

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mass-dev/mass/trainer/safetensors"

	"github.com/mass-dev/mass/errclass"
)

// TestHybrid27BConfig reads the paper's Qwen3.6-27B config.json (config only):
// 48 Gated DeltaNet and 16 gated full-attention layers, rotary on 64 of 256
// head dims, and a parameter count from the tensor shapes it implies.
func TestHybrid27BConfig(t *testing.T) {
	c, err := LoadConfig(filepath.Join("testdata", "qwen3.6-27b"))
	if err != nil {
		t.Fatal(err)
	}
	h := c.Hybrid
	if c.Arch != Qwen35 || h == nil || !h.Nested || h.RotaryDim != 64 || !h.OutputGate || h.ConvDim() != 2*16*128+48*128 {
		t.Fatalf("config %+v hybrid %+v", c, h)
	}
	p := c.MemoryPlan()
	if p.LinearLayer != 48 || p.FullLayers != 16 {
		t.Errorf("layers %d linear %d full", p.LinearLayer, p.FullLayers)
	}
	// Independent count: embeddings + head, per-layer MLP and norms, and the
	// two mixers' projections.
	d, v, f := int64(5120), int64(248320), int64(17408)
	mlp := 3*d*f + 2*d
	full := d*(2*24*256) + 2*d*(4*256) + (24*256)*d + 2*256
	lin := d*(2*16*128+48*128) + d*(48*128) + 2*d*48 + (2*16*128+48*128)*4 + 2*48 + 128 + (48*128)*d
	want := 2*v*d + d + 64*mlp + 16*full + 48*lin
	if p.Params != want {
		t.Errorf("params %d, want %d", p.Params, want)
	}
	t.Logf("Qwen3.6-27B text decoder: %s", p)
	if p.Available > 0 && p.Available < p.HostFP32 {
		if err := p.Fits(); !errors.Is(err, ErrDoesNotFit) || !errors.Is(err, errclass.ErrTooLarge) {
			t.Errorf("Fits on a %d-byte machine = %v, want ErrDoesNotFit", p.Available, err)
		}
		_, err := Load(filepath.Join("testdata", "qwen3.6-27b"))
		if !errors.Is(err, ErrDoesNotFit) || !strings.Contains(err.Error(), "float32") {
			t.Errorf("Load of the 27B config = %v, want a clean memory refusal", err)
		}
		t.Logf("refused: %v", err)
	}
}

func TestHybridRefusals(t *testing.T) {
	for name, js := range map[string]string{
		"moe outer":     `{"model_type":"qwen3_5_moe","text_config":{"model_type":"qwen3_5_moe_text"}}`,
		"moe text":      `{"model_type":"qwen3_5","text_config":{"model_type":"qwen3_5_moe_text"}}`,
		"next":          `{"model_type":"qwen3_next","num_experts":512}`,
		"experts":       `{"model_type":"qwen3_5_text","num_experts":8,"vocab_size":8,"hidden_size":8,"intermediate_size":8,"num_hidden_layers":1,"num_attention_heads":1,"head_dim":8}`,
		"no text":       `{"model_type":"qwen3_5"}`,
		"bad layer":     `{"model_type":"qwen3_5_text","vocab_size":8,"hidden_size":8,"intermediate_size":8,"num_hidden_layers":1,"num_attention_heads":1,"head_dim":8,"layer_types":["mamba"],"linear_num_key_heads":1,"linear_num_value_heads":1,"linear_key_head_dim":4,"linear_value_head_dim":4,"partial_rotary_factor":0.5}`,
		"short types":   `{"model_type":"qwen3_5_text","vocab_size":8,"hidden_size":8,"intermediate_size":8,"num_hidden_layers":2,"num_attention_heads":1,"head_dim":8,"layer_types":["full_attention"],"linear_num_key_heads":1,"linear_num_value_heads":1,"linear_key_head_dim":4,"linear_value_head_dim":4}`,
		"odd rotary":    `{"model_type":"qwen3_5_text","vocab_size":8,"hidden_size":8,"intermediate_size":8,"num_hidden_layers":1,"num_attention_heads":1,"head_dim":8,"linear_num_key_heads":1,"linear_num_value_heads":1,"linear_key_head_dim":4,"linear_value_head_dim":4,"partial_rotary_factor":0.125}`,
		"value heads":   `{"model_type":"qwen3_5_text","vocab_size":8,"hidden_size":8,"intermediate_size":8,"num_hidden_layers":1,"num_attention_heads":1,"head_dim":8,"linear_num_key_heads":2,"linear_num_value_heads":3,"linear_key_head_dim":4,"linear_value_head_dim":4}`,
		"missing heads": `{"model_type":"qwen3_5_text","vocab_size":8,"hidden_size":8,"intermediate_size":8,"num_hidden_layers":1,"num_attention_heads":1,"head_dim":8}`,
	} {
		if _, err := ParseConfig([]byte(js)); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: err = %v, want ErrUnsupported", name, err)
		}
	}
}

// TestHybridSaveLoad writes hybrid-micro in the official layout, adds vision
// and mtp tensors the trainer does not use, and checks that Load keeps the
// decoder, lists the rest as carried and Save copies them byte for byte.
func TestHybridSaveLoad(t *testing.T) {
	cfg, _ := Preset("hybrid-micro")
	m := NewRandom(cfg, 3)
	src := t.TempDir()
	if err := m.Save(src, safetensors.F32, 16<<10); err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	b, _ := os.ReadFile(filepath.Join(src, "config.json"))
	if err := json.Unmarshal(b, &raw); err != nil || raw["model_type"] != "qwen3_5" || raw["text_config"] == nil {
		t.Fatalf("config.json not nested: %s", b)
	}
	st, err := safetensors.OpenModel(src)
	if err != nil {
		t.Fatal(err)
	}
	names := st.Names()
	st.Close()
	if !slices.Contains(names, "model.language_model.layers.0.linear_attn.in_proj_qkv.weight") || !slices.Contains(names, "lm_head.weight") ||
		!slices.Contains(names, "model.language_model.layers.3.self_attn.q_proj.weight") || slices.Contains(names, "model.layers.0.mlp.up_proj.weight") {
		t.Fatalf("tensor names not official: %v", names)
	}
	extra := []safetensors.Tensor{
		{Name: "model.visual.blocks.0.attn.qkv.weight", DType: safetensors.BF16, Shape: []int{2, 3}, Data: []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}},
		{Name: "mtp.fc.weight", DType: safetensors.F32, Shape: []int{1}, Data: []byte{0, 0, 128, 63}},
	}
	if err := safetensors.Write(filepath.Join(src, "extra.safetensors"), extra, nil); err != nil {
		t.Fatal(err)
	}
	addToIndex(t, src, "extra.safetensors", extra)
	back, err := Load(src)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.Carried, []string{"model.visual.blocks.0.attn.qkv.weight", "mtp.fc.weight"}) {
		t.Fatalf("carried %v", back.Carried)
	}
	for n, want := range m.Tensors {
		if !slices.Equal(back.Get(n).Data, want.Data) {
			t.Fatalf("%s differs after round trip", n)
		}
	}
	out := t.TempDir()
	if err := back.Save(out, safetensors.BF16, 0); err != nil {
		t.Fatal(err)
	}
	again, err := safetensors.OpenModel(out)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	for _, e := range extra {
		ti, ok := again.Info(e.Name)
		if !ok || ti.DType != e.DType || !slices.Equal(ti.Shape, e.Shape) {
			t.Fatalf("carried %s: %+v %v", e.Name, ti, ok)
		}
	}
	if _, err := Load(out); err != nil {
		t.Fatal(err)
	}
	if err := back.Save(src, safetensors.BF16, 0); err == nil {
		t.Error("saving over the source folder succeeded")
	}
	if _, err := Load(src); err != nil {
		t.Errorf("the refused save damaged its source: %v", err)
	}
}

func addToIndex(t *testing.T, dir, shard string, ts []safetensors.Tensor) {
	t.Helper()
	p := filepath.Join(dir, safetensors.IndexFile)
	var ix safetensors.Index
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &ix); err != nil {
		t.Fatal(err)
	}
	for _, x := range ts {
		ix.WeightMap[x.Name] = shard
	}
	b, _ = json.Marshal(ix)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
