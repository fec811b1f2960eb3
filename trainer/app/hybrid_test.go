package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mass-dev/mass/trainer/export"
	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/model"
)

// TestHybridInitTrainExport: init-model writes the hybrid presets in the
// official layout (hybrid-tiny with the tokenizer; --layers regenerates
// layer_types), train defaults to all ten reference targets on a hybrid, and
// export writes them; inspect-model refuses the 27B config on this machine.
func TestHybridInitTrainExport(t *testing.T) {
	dir := t.TempDir()
	tiny := filepath.Join(dir, "tiny")
	mustRun(t, "init-model", "--config", "hybrid-tiny", "--out", tiny, "--dtype", "bf16")
	if _, err := os.Stat(filepath.Join(tiny, "tokenizer.json")); err != nil {
		t.Errorf("hybrid-tiny has no tokenizer: %v", err)
	}
	m8 := filepath.Join(dir, "micro8")
	mustRun(t, "init-model", "--config", "hybrid-micro", "--out", m8, "--layers", "8")
	c, err := model.LoadConfig(m8)
	if err != nil {
		t.Fatal(err)
	}
	if c.Hybrid == nil || len(c.Hybrid.LayerTypes) != 8 || c.IsLinear(3) || !c.IsLinear(4) || c.IsLinear(7) {
		t.Fatalf("layer types %v", c.Hybrid)
	}
	rows := filepath.Join(dir, "rows.jsonl")
	mustRun(t, "toy-data", "--out", rows, "--n", "8", "--seq", "16", "--symbols", "8")
	run := filepath.Join(dir, "run")
	mustRun(t, "train", "--model", m8, "--data", rows, "--out", run, "--steps", "2", "--rank", "2", "--alpha", "4", "--val-every", "0")
	ad := filepath.Join(dir, "adapter")
	mustRun(t, "export", "--run", run, "--checkpoint", "latest", "--out", ad)
	var ac export.AdapterConfig
	b, _ := os.ReadFile(filepath.Join(ad, export.AdapterConfigFile))
	if err := json.Unmarshal(b, &ac); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ac.TargetModules, lora.HybridTargets()) {
		t.Errorf("exported target_modules %v, want %v", ac.TargetModules, lora.HybridTargets())
	}
	_, _, err = runApp("inspect-model", "--model", filepath.Join("..", "model", "testdata", "qwen3.6-27b"))
	if err == nil || !strings.Contains(err.Error(), "float32") {
		t.Logf("inspect-model of the 27B config on a machine that holds 100 GiB: %v", err)
	}
}
