package app

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/mass-dev/mass/trainer/model"
	"github.com/mass-dev/mass/trainer/safetensors"
)

// TestEvalUniformHead evaluates a micro model whose LM head is zero: every
// logit is 0, so each supervised token costs exactly ln(vocab).
func TestEvalUniformHead(t *testing.T) {
	f := newToy(t)
	cfg, err := model.Preset("micro")
	if err != nil {
		t.Fatal(err)
	}
	m := model.NewRandom(cfg, 5)
	clear(m.Get("lm_head.weight").Data)
	dir := filepath.Join(f.dir, "uniform")
	if err := m.Save(dir, safetensors.F32, 0); err != nil {
		t.Fatal(err)
	}
	want := math.Log(float64(cfg.VocabSize))

	res := evalJSON(t, "--model", dir, "--data", f.val)
	if !near(res.Loss, want, 1e-6) {
		t.Errorf("loss %.9f, want ln(%d) = %.9f", res.Loss, cfg.VocabSize, want)
	}
	if got, want := [...]int{res.Windows, res.SupervisedTokens, res.Skipped}, [...]int{toyValRows, toyValRows * toySup, 0}; got != want {
		t.Errorf("windows, supervised tokens, skipped = %v, want %v", got, want)
	}

	stdout, _ := mustRun(t, "eval", "--model", dir, "--data", f.val)
	if got, want := stdout, fmt.Sprintf("loss %.6f over %d windows (%d supervised tokens, 0 skipped)\n", want, toyValRows, toyValRows*toySup); got != want {
		t.Errorf("eval printed %q, want %q", got, want)
	}
}

// TestEvalRandomModel checks that a random model's loss depends on its weights
// and not on how they are stored: the F32 and BF16 copies of one model agree to
// bf16 rounding, another seed does not.
func TestEvalRandomModel(t *testing.T) {
	f := newToy(t)
	bf16 := filepath.Join(f.dir, "micro-bf16")
	other := filepath.Join(f.dir, "micro-seed2")
	mustRun(t, "init-model", "--config", "micro", "--out", bf16, "--dtype", "BF16")
	mustRun(t, "init-model", "--config", "micro", "--out", other, "--seed", "2")

	base := evalJSON(t, "--model", f.model, "--data", f.val)
	if got := evalJSON(t, "--model", bf16, "--data", f.val); !near(got.Loss, base.Loss, 1e-2) || got.Loss == base.Loss {
		t.Errorf("BF16 copy: loss %v, want near but not equal to the F32 model's %v", got.Loss, base.Loss)
	}
	if got := evalJSON(t, "--model", other, "--data", f.val); near(got.Loss, base.Loss, 1e-3) {
		t.Errorf("seed 2: loss %v, too close to seed 1's %v", got.Loss, base.Loss)
	}
}
