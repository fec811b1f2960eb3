package export

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/model"
)

func microConfig(t *testing.T) *model.Config {
	t.Helper()
	mc, err := model.Preset("micro")
	if err != nil {
		t.Fatal(err)
	}
	return mc
}

// TestTargetModuleForms reads every target_modules form PEFT writes.
func TestTargetModuleForms(t *testing.T) {
	mc := microConfig(t)
	for _, c := range []struct{ targets, exclude, want string }{
		{`["q_proj","v_proj"]`, ``, "q_proj,v_proj"},
		{`["v_proj","self_attn.q_proj"]`, ``, "q_proj,v_proj"},
		{`"q_proj"`, ``, ""}, // a string is a regex over the whole name: nothing is called just q_proj
		{`".*\\.(q|k|v|o)_proj"`, ``, "q_proj,k_proj,v_proj,o_proj"},
		{`"model\\.layers\\.\\d+\\.mlp\\..*"`, ``, "gate_proj,up_proj,down_proj"},
		{`"all-linear"`, ``, strings.Join(lora.Modules, ",")},
		{`"all-linear"`, `["down_proj","o_proj"]`, "q_proj,k_proj,v_proj,gate_proj,up_proj"},
		{`["q_proj","up_proj"]`, `".*up_proj"`, "q_proj"},
	} {
		b := `{"peft_type":"LORA","r":4,"lora_alpha":8,"target_modules":` + c.targets
		if c.exclude != "" {
			b += `,"exclude_modules":` + c.exclude
		}
		cfg, err := ParseAdapterConfig([]byte(b+`}`), mc)
		if c.want == "" {
			if err == nil {
				t.Errorf("targets %s: accepted %v, want a refusal", c.targets, cfg.Targets)
			}
			continue
		}
		if err != nil {
			t.Errorf("targets %s exclude %s: %v", c.targets, c.exclude, err)
			continue
		}
		if got := strings.Join(cfg.Targets, ","); got != c.want {
			t.Errorf("targets %s exclude %s: got %s, want %s", c.targets, c.exclude, got, c.want)
		}
	}
}

func TestAdapterConfigRefusals(t *testing.T) {
	mc := microConfig(t)
	for _, c := range []struct{ extra, want string }{
		{`"target_modules":["q_proj","lm_head"]`, `"lm_head" names no projection`},
		{`"target_modules":"model\\.layers\\.0\\..*"`, "in 1 of 2 layers"},
		{`"target_modules":["q_proj"],"init_lora_weights":"pissa_niter_4"`, "path_initial_model_for_weight_conversion"},
		{`"target_modules":["q_proj"],"init_lora_weights":"loftq"`, "residual base weights"},
		{`"target_modules":["q_proj"],"init_lora_weights":"mystery"`, "not a PEFT initialization"},
		{`"target_modules":["q_proj"],"use_dora":true`, "DoRA"},
		{`"target_modules":["q_proj"],"layers_to_transform":[0]`, "layers_to_transform"},
		{`"target_modules":["q_proj"],"rank_pattern":{"q_proj":2.5}`, "positive integer"},
		{`"target_modules":["q_proj"],"rank_pattern":{"(?<=x)q":2}`, "regular expression"},
	} {
		_, err := ParseAdapterConfig([]byte(`{"peft_type":"LORA","r":4,"lora_alpha":8,`+c.extra+`}`), mc)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.extra, err, c.want)
		}
	}
	for _, init := range []string{`true`, `false`, `"gaussian"`, `"eva"`, `"orthogonal"`} {
		if _, err := ParseAdapterConfig([]byte(`{"peft_type":"LORA","r":4,"lora_alpha":8,"target_modules":["q_proj"],"init_lora_weights":`+init+`}`), mc); err != nil {
			t.Errorf("init_lora_weights %s: %v", init, err)
		}
	}
}

// TestPatternsRoundTrip writes an adapter whose ranks and alphas differ per
// module, reads it back and checks shapes, scalings and the merged weights.
func TestPatternsRoundTrip(t *testing.T) {
	mc := microConfig(t)
	cfg := lora.Config{Rank: 4, Alpha: 8, Targets: []string{"q_proj", "v_proj", "down_proj"},
		RankPattern:  lora.Patterns{{Key: `model\.layers\.1\.mlp\.down_proj`, Value: 2}, {Key: "q_proj", Value: 6}},
		AlphaPattern: lora.Patterns{{Key: "v_proj", Value: 3}}}
	m := model.NewRandom(mc, 3)
	a, err := lora.New(cfg, mc, 4)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range a.Params {
		for i := range p.Data {
			p.Data[i] = float32(i%7) * 0.01
		}
	}
	dir := t.TempDir()
	if err := WriteAdapter(dir, a, "/models/base"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, AdapterConfigFile))
	if !strings.Contains(string(b), `"rank_pattern": {`) || !strings.Contains(string(b), `"q_proj": 6`) {
		t.Fatalf("adapter_config.json lost rank_pattern:\n%s", b)
	}
	back, err := ReadAdapter(dir, mc)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		layer  int
		module string
		rank   int
		scale  float64
	}{{0, "q_proj", 6, 8.0 / 6}, {1, "q_proj", 6, 8.0 / 6}, {0, "down_proj", 4, 2}, {1, "down_proj", 2, 4}, {0, "v_proj", 4, 0.75}} {
		if got := back.Param(lora.AName(c.layer, c.module)).Shape[0]; got != c.rank {
			t.Errorf("layer %d %s: rank %d, want %d", c.layer, c.module, got, c.rank)
		}
		if got := back.Config.ScalingOf(c.layer, c.module); got != c.scale {
			t.Errorf("layer %d %s: scaling %v, want %v", c.layer, c.module, got, c.scale)
		}
	}
	merged, err := Merge(m, back)
	if err != nil {
		t.Fatal(err)
	}
	name := model.LayerName(1, "mlp.down_proj.weight")
	w, got := m.Get(name), merged.Get(name)
	pa, pb := back.Param(lora.AName(1, "down_proj")), back.Param(lora.BName(1, "down_proj"))
	cols := w.Shape[1]
	var want float64
	for k := 0; k < 2; k++ {
		want += float64(pb.Data[k]) * float64(pa.Data[k*cols])
	}
	if d := float64(got.Data[0]) - float64(w.Data[0]) - 4*want; d > 1e-6 || d < -1e-6 {
		t.Errorf("merged down_proj[0,0] off by %g from W + (alpha/r)·B·A with the pattern's rank", d)
	}
	if !slices.Equal(back.Config.Targets, cfg.Targets) {
		t.Errorf("targets %v, want %v", back.Config.Targets, cfg.Targets)
	}
}
