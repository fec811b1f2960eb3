package generation

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mass-dev/mass/trainer/trainflags"
)

// TestRecipeArgs: every knob of the paper's training section reaches
// mass-train train as its flag.
func TestRecipeArgs(t *testing.T) {
	d := 0.05
	r := &Recipe{Window: 49152, ContextOverlap: 8192, LR: 3e-5, WarmupSteps: 5, MinLRRatio: 0.1, LoRAR: 64, LoRAAlpha: 128,
		LoRADropout: &d, Targets: []string{"q_proj", "v_proj"}, SaveEvery: 50, ValEvery: 150, WindowsPerStep: 3, Seed: 1234}
	got := strings.Join(r.Args(), " ")
	want := "--lr 3e-05 --warmup 5 --floor 0.1 --rank 64 --alpha 128 --dropout 0.05 --targets q_proj,v_proj --ckpt-every 50 --val-every 150 --batch 1 --accum 3 --seed 1234"
	if got != want {
		t.Errorf("args\n got %s\nwant %s", got, want)
	}
	// The flags are mass-train's, as trainer/trainflags declares them (the one list of
	// mass-train's knobs; a test-only import keeps the trainer out of this package).
	for _, a := range r.Args() {
		if name, ok := strings.CutPrefix(a, "--"); ok {
			if _, ok := trainflags.Lookup(name); !ok {
				t.Errorf("recipe renders --%s, which mass-train does not declare", name)
			}
		}
	}
	if err := r.Validate(); err != nil {
		t.Error(err)
	}
	for _, bad := range []Recipe{{Window: 100, ContextOverlap: 100}, {LR: -1}, {Targets: []string{"q_proj; rm"}}, {WindowsPerStep: -3}} {
		if err := bad.Validate(); err == nil {
			t.Errorf("recipe %+v accepted", bad)
		}
	}
}

// TestPerGenerationOverrides: generation 2 of a cycle runs with its
// overrides (training merged by key), generation 1 with the cycle's; a
// bad key or an override of the tasks is refused at submission.
func TestPerGenerationOverrides(t *testing.T) {
	w := &world{root: t.TempDir()}
	p := small
	p.Training = &Recipe{LR: 3e-5, LoRAR: 64}
	cp := CycleParams{GenerationParams: p, Generations: 2, PerGeneration: map[string]json.RawMessage{
		"2": json.RawMessage(`{"episodes": 9, "training": {"lr": 2e-5}}`)}}
	raw, _ := json.Marshal(cp)
	k := NewCycleKind(w)
	if err := k.Validate(raw); err != nil {
		t.Fatal(err)
	}
	named := cp
	named.ServedName = "L"
	if b, _ := json.Marshal(named); k.Validate(b) == nil {
		t.Error("one served name for two generations accepted")
	}
	for _, bad := range []string{`{"3": {}}`, `{"2": {"tasks": ["x"]}}`, `{"2": {"episodes": "many"}}`, `{"2": {"bogus": 1}}`} {
		var m map[string]json.RawMessage
		_ = json.Unmarshal([]byte(bad), &m)
		b, _ := json.Marshal(CycleParams{GenerationParams: p, Generations: 2, PerGeneration: m})
		if err := k.Validate(b); err == nil {
			t.Errorf("per_generation %s accepted", bad)
		}
	}
	if err := k.Run(context.Background(), job(w.root, CycleKindName, cp), &reporter{}); err != nil {
		t.Fatal(err)
	}
	var r1, r2 Resolved
	readJSON(filepath.Join(w.root, "generations", "1", ConfigFile), &r1)
	readJSON(filepath.Join(w.root, "generations", "2", ConfigFile), &r2)
	if r1.Episodes != 8 || r1.Recipe.LR != 3e-5 || r2.Episodes != 9 || r2.Recipe.LR != 2e-5 || r2.Recipe.LoRAR != 64 {
		t.Errorf("generation 1 %+v %+v, generation 2 %+v %+v", r1, r1.Recipe, r2, r2.Recipe)
	}
	if r2.Seed != r1.Seed+SeedStride {
		t.Errorf("seeds %d and %d", r1.Seed, r2.Seed)
	}
}

// TestResumeWithDifferentConfigRefused: a generation directory resumed
// with a configuration that resolves differently is refused, naming the
// keys; the same configuration resumes.
func TestResumeWithDifferentConfigRefused(t *testing.T) {
	w := &world{root: t.TempDir()}
	k := NewKind(w)
	j := job(w.root, KindName, small)
	if err := k.Run(context.Background(), j, &reporter{}); err != nil {
		t.Fatal(err)
	}
	if err := k.Run(context.Background(), j, &reporter{}); err != nil {
		t.Fatalf("resume with the same config: %v", err)
	}
	other := small
	other.Episodes, other.Training = 9, &Recipe{LR: 1e-4}
	j.Params, _ = json.Marshal(other)
	err := k.Run(context.Background(), j, &reporter{})
	if err == nil || !strings.Contains(err.Error(), "episodes: 8 → 9") || !strings.Contains(err.Error(), "training: null →") {
		t.Errorf("resume with another config: %v", err)
	}
}
