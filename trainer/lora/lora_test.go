package lora

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/mass-dev/mass/trainer/model"
)

func TestNewInitializesAsPEFT(t *testing.T) {
	mc, _ := model.Preset("micro")
	a, err := New(Config{Rank: 4, Alpha: 8, Targets: []string{"q_proj", "down_proj"}}, mc, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(a.Params), 2*2*mc.NumLayers; got != want {
		t.Fatalf("params = %d, want %d", got, want)
	}
	tests := []struct {
		name  string
		shape []int
		bound float64 // 0: all zero
	}{
		{AName(0, "q_proj"), []int{4, 32}, 1 / math.Sqrt(32)},
		{BName(0, "q_proj"), []int{32, 4}, 0},
		{AName(1, "down_proj"), []int{4, 64}, 1 / math.Sqrt(64)},
		{BName(1, "down_proj"), []int{32, 4}, 0},
	}
	for _, tc := range tests {
		p := a.Param(tc.name)
		if p == nil {
			t.Fatalf("missing %s", tc.name)
		}
		if got, want := p.Shape, tc.shape; got[0] != want[0] || got[1] != want[1] {
			t.Errorf("%s shape %v, want %v", tc.name, got, want)
		}
		var mx float64
		for _, v := range p.Data {
			mx = math.Max(mx, math.Abs(float64(v)))
		}
		if tc.bound == 0 && mx != 0 {
			t.Errorf("%s not zero (max %v)", tc.name, mx)
		}
		// kaiming_uniform(a=√5) bound is 1/√fan_in; the sample should fill most of it.
		if tc.bound > 0 && (mx > tc.bound || mx < 0.8*tc.bound) {
			t.Errorf("%s max |A| = %v, want within (0.8, 1]·%v", tc.name, mx, tc.bound)
		}
	}
	if got, want := a.Param(AName(0, "q_proj")).Name, "model.layers.0.self_attn.q_proj.lora_A.weight"; got != want {
		t.Errorf("name %q, want %q", got, want)
	}
}

func TestScalingAndValidate(t *testing.T) {
	if got, want := (Config{Rank: 64, Alpha: 128}).Scaling(), 2.0; got != want {
		t.Errorf("scaling = %v, want %v", got, want)
	}
	if got, want := (Config{Rank: 64, Alpha: 128, RSLoRA: true}).Scaling(), 16.0; got != want {
		t.Errorf("rslora scaling = %v, want %v", got, want)
	}
	for _, c := range []Config{{Rank: 0, Targets: Modules}, {Rank: 4, Dropout: 1, Targets: Modules}, {Rank: 4}, {Rank: 4, Targets: []string{"lm_head"}}} {
		if c.Validate() == nil {
			t.Errorf("Validate(%+v) accepted", c)
		}
	}
}

func TestSaveLoadRejectsOtherShapes(t *testing.T) {
	mc, _ := model.Preset("micro")
	a, _ := New(Config{Rank: 4, Alpha: 8, Targets: Modules}, mc, 1)
	p := filepath.Join(t.TempDir(), "a.safetensors")
	if err := a.Save(p, PEFTPrefix, nil); err != nil {
		t.Fatal(err)
	}
	b, _ := New(Config{Rank: 4, Alpha: 8, Targets: Modules}, mc, 2)
	if err := b.Load(p); err != nil {
		t.Fatal(err)
	}
	if got, want := b.Params[0].Data[3], a.Params[0].Data[3]; got != want {
		t.Errorf("loaded %v, want %v", got, want)
	}
	c, _ := New(Config{Rank: 8, Alpha: 8, Targets: Modules}, mc, 2)
	if err := c.Load(p); err == nil {
		t.Error("rank-8 adapter loaded rank-4 tensors")
	}
	d, _ := New(Config{Rank: 4, Alpha: 8, Targets: []string{"q_proj"}}, mc, 2)
	if err := d.Load(p); err == nil {
		t.Error("q-only adapter loaded an all-module file")
	}
}
