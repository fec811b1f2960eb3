package model

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mass-dev/mass/trainer/safetensors"
)

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name, js      string
		arch          Arch
		headDim       int
		theta         float64
		bias, wantErr bool
	}{
		{"qwen3 top-level theta", `{"model_type":"qwen3","vocab_size":10,"hidden_size":8,"intermediate_size":16,"num_hidden_layers":1,"num_attention_heads":2,"num_key_value_heads":1,"head_dim":4,"rope_theta":1000000}`, Qwen3, 4, 1e6, false, false},
		{"qwen3 rope_parameters", `{"model_type":"qwen3","vocab_size":10,"hidden_size":8,"intermediate_size":16,"num_hidden_layers":1,"num_attention_heads":2,"num_key_value_heads":1,"head_dim":4,"rope_parameters":{"rope_theta":5000,"rope_type":"default"}}`, Qwen3, 4, 5000, false, false},
		{"qwen2 no head_dim", `{"model_type":"qwen2","vocab_size":10,"hidden_size":8,"intermediate_size":16,"num_hidden_layers":1,"num_attention_heads":2,"num_key_value_heads":2,"rope_theta":10000}`, Qwen2, 4, 10000, true, false},
		{"llama", `{"model_type":"llama","vocab_size":10,"hidden_size":8,"intermediate_size":16,"num_hidden_layers":1,"num_attention_heads":2}`, "", 0, 0, false, true},
		{"moe", `{"model_type":"qwen3_moe","vocab_size":10,"hidden_size":8,"intermediate_size":16,"num_hidden_layers":1,"num_attention_heads":2}`, "", 0, 0, false, true},
		{"yarn", `{"model_type":"qwen3","vocab_size":10,"hidden_size":8,"intermediate_size":16,"num_hidden_layers":1,"num_attention_heads":2,"rope_scaling":{"rope_type":"yarn"}}`, "", 0, 0, false, true},
		{"bad gqa", `{"model_type":"qwen3","vocab_size":10,"hidden_size":8,"intermediate_size":16,"num_hidden_layers":1,"num_attention_heads":3,"num_key_value_heads":2,"head_dim":4}`, "", 0, 0, false, true},
		{"zero layers", `{"model_type":"qwen3","vocab_size":10,"hidden_size":8,"intermediate_size":16,"num_hidden_layers":0,"num_attention_heads":2}`, "", 0, 0, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseConfig([]byte(tc.js))
			if tc.wantErr {
				if !errors.Is(err, ErrUnsupported) {
					t.Fatalf("err = %v, want ErrUnsupported", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Arch != tc.arch || c.HeadDim != tc.headDim || c.RopeTheta != tc.theta || c.AttentionBias != tc.bias {
				t.Errorf("got arch %s head_dim %d theta %v bias %v, want %s %d %v %v", c.Arch, c.HeadDim, c.RopeTheta, c.AttentionBias, tc.arch, tc.headDim, tc.theta, tc.bias)
			}
		})
	}
}

func TestSaveLoadAndErrors(t *testing.T) {
	cfg, _ := Preset("micro")
	m := NewRandom(cfg, 1)
	for _, dt := range []safetensors.DType{safetensors.BF16, safetensors.F16, safetensors.F32} {
		dir := filepath.Join(t.TempDir(), string(dt))
		if err := m.Save(dir, dt, 32<<10); err != nil {
			t.Fatal(err)
		}
		back, err := Load(dir)
		if err != nil {
			t.Fatalf("%s: %v", dt, err)
		}
		w, g := m.Get("lm_head.weight").Data, back.Get("lm_head.weight").Data
		for i := range w {
			if d := w[i] - g[i]; d > 0.01 || d < -0.01 {
				t.Fatalf("%s: lm_head[%d] %v -> %v", dt, i, w[i], g[i])
			}
		}
	}
	// A weight of the wrong shape and a wrong dtype are both reported by name.
	dir := t.TempDir()
	if err := m.Save(dir, safetensors.F32, 0); err != nil {
		t.Fatal(err)
	}
	bad := *m
	bad.Tensors = map[string]*Tensor{}
	for n, v := range m.Tensors {
		bad.Tensors[n] = v
	}
	bad.Tensors["model.norm.weight"] = &Tensor{Shape: []int{31}, Data: make([]float32, 31)}
	if err := bad.Save(dir, safetensors.F32, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "model.norm.weight") {
		t.Errorf("wrong shape: err = %v", err)
	}
	if err := os.Remove(filepath.Join(dir, "model.safetensors")); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil {
		t.Error("missing weights loaded")
	}
}

func TestWriteTokenizer(t *testing.T) {
	dir := t.TempDir()
	if err := WriteTokenizer(dir); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../tokenizer/testdata/tokenizer.json")
	if err != nil {
		t.Fatalf("read the tokenizer fixture: %v", err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Error("embedded tokenizer.json differs from the fixture")
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(`{"model_type":"qwen3","vocab_size":10,"hidden_size":8,"intermediate_size":16,"num_hidden_layers":1,"num_attention_heads":2,"head_dim":4}`))
	f.Add([]byte(`{"model_type":"qwen2","rope_parameters":{"rope_theta":1}}`))
	f.Add([]byte(`[]`))
	if b, err := os.ReadFile(filepath.Join("testdata", "qwen3.6-27b", "config.json")); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"model_type":"qwen3_5_text","vocab_size":8,"hidden_size":8,"intermediate_size":8,"num_hidden_layers":2,"num_attention_heads":1,"head_dim":8,"linear_num_key_heads":1,"linear_num_value_heads":2,"linear_key_head_dim":4,"linear_value_head_dim":4,"partial_rotary_factor":0.5,"full_attention_interval":2}`))
	f.Add([]byte(`{"model_type":"qwen3_5","text_config":{"model_type":"qwen3_5_moe_text"}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseConfig(b)
		if err != nil {
			return
		}
		if c.HeadDim <= 0 || c.HeadDim%2 != 0 || c.NumHeads%c.NumKVHeads != 0 || c.VocabSize <= 0 {
			t.Fatalf("accepted an unusable config: %+v", c)
		}
		if h := c.Hybrid; h != nil {
			if len(h.LayerTypes) != c.NumLayers || h.KeyHeads <= 0 || h.ValueHeads%h.KeyHeads != 0 || h.RotaryDim <= 0 || h.RotaryDim%2 != 0 || h.ConvKernel <= 0 {
				t.Fatalf("accepted an unusable hybrid config: %+v %+v", c, h)
			}
			if _, err := c.JSON(); err != nil {
				t.Fatal(err)
			}
		}
	})
}
