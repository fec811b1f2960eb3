package export

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mass-dev/mass/trainer"
	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/model"
	"github.com/mass-dev/mass/trainer/refbackend"
	"github.com/mass-dev/mass/trainer/safetensors"
)

func trained(t *testing.T) (*model.Model, *lora.Adapter) {
	t.Helper()
	mc, err := model.Preset("micro")
	if err != nil {
		t.Fatal(err)
	}
	m := model.NewRandom(mc, 3)
	a, err := lora.New(lora.Config{Rank: 4, Alpha: 8, Dropout: 0.05, Targets: []string{"q_proj", "v_proj", "down_proj"}}, mc, 4)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 5))
	for _, p := range a.Params {
		for i := range p.Data {
			p.Data[i] = float32(rng.NormFloat64() * 0.1) // as if trained: B no longer zero
		}
	}
	return m, a
}

func logits(t *testing.T, m *model.Model, a *lora.Adapter) []float32 {
	t.Helper()
	be, err := refbackend.New(m, a)
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	w := trainer.Window{InputIDs: []int32{1, 9, 33, 200, 4, 4, 17}, Labels: []int32{-100, 9, 33, 200, 4, 4, 17}}
	l, err := be.Logits(context.Background(), w)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestAdapterRoundTripGivesIdenticalLogits(t *testing.T) {
	m, a := trained(t)
	dir := t.TempDir()
	if err := WriteAdapter(dir, a, "Qwen/Qwen3-0.6B"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, AdapterConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	var ac map[string]any
	if err := json.Unmarshal(b, &ac); err != nil {
		t.Fatalf("parse %s: %v", AdapterConfigFile, err)
	}
	for k, want := range map[string]any{"peft_type": "LORA", "task_type": "CAUSAL_LM", "r": 4.0, "lora_alpha": 8.0, "bias": "none"} {
		if got := ac[k]; got != want {
			t.Errorf("adapter_config %s = %v, want %v", k, got, want)
		}
	}
	f, err := safetensors.Open(filepath.Join(dir, AdapterWeightsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for name, shape := range map[string][]int{
		"base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight": {4, 32},
		"base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight": {32, 4},
		"base_model.model.model.layers.1.mlp.down_proj.lora_A.weight":    {4, 64},
		"base_model.model.model.layers.1.self_attn.v_proj.lora_B.weight": {16, 4},
	} {
		ti, ok := f.Info(name)
		if !ok {
			t.Errorf("adapter lacks %s", name)
			continue
		}
		if !slices.Equal(ti.Shape, shape) {
			t.Errorf("%s shape %v, want %v", name, ti.Shape, shape)
		}
	}
	back, err := ReadAdapter(dir, m.Config)
	if err != nil {
		t.Fatal(err)
	}
	want, got := logits(t, m, a), logits(t, m, back)
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("logit %d = %v after reload, want %v", i, got[i], want[i])
		}
	}
}

func TestMergedModelMatchesAdapter(t *testing.T) {
	m, a := trained(t)
	dir := t.TempDir()
	if err := WriteMerged(dir, m, a, MergedOptions{DType: safetensors.F32, MaxShardBytes: 64 << 10}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, safetensors.IndexFile)); err != nil {
		t.Errorf("expected a sharded model with an index: %v", err)
	}
	mm, err := model.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	empty, _ := lora.New(lora.Config{Rank: 1, Alpha: 1, Targets: []string{"q_proj"}}, m.Config, 0)
	want, got := logits(t, m, a), logits(t, mm, empty)
	var num, den float64
	for i := range want {
		d := float64(got[i] - want[i])
		num += d * d
		den += float64(want[i]) * float64(want[i])
	}
	if e := math.Sqrt(num / den); e > 1e-5 {
		t.Errorf("merged logits relative error %.3g > 1e-5", e)
	}
}

func TestFP8BlockQuantization(t *testing.T) {
	rows, cols := 200, 300
	rng := rand.New(rand.NewPCG(1, 2))
	w := make([]float32, rows*cols)
	for i := range w {
		w[i] = float32(rng.NormFloat64())
		if i/cols >= 128 {
			w[i] *= 100 // a block with a very different range
		}
	}
	codes, inv := QuantizeFP8(w, rows, cols)
	if got, want := len(inv), 2*3; got != want {
		t.Fatalf("scale_inv has %d blocks, want %d", got, want)
	}
	back := DequantizeFP8(codes, inv, rows, cols)
	for i := range w {
		// e4m3 keeps 3 mantissa bits: relative error ≤ 2^-4 for normals, and
		// values far below the block maximum lose absolute precision.
		bi := (i/cols/FP8Block)*3 + (i%cols)/FP8Block
		tol := math.Abs(float64(w[i]))/16 + float64(inv[bi])*math.Ldexp(1, -9)
		if d := math.Abs(float64(back[i] - w[i])); d > tol {
			t.Fatalf("element %d: %v -> %v (tolerance %v)", i, w[i], back[i], tol)
		}
	}
}
