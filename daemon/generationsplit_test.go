package daemon_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mass-dev/mass/cycle/generation"
	"github.com/mass-dev/mass/daemon/config"
)

// TestGenerationSplitGuardReadsSpecs: massd's generation and cycle kinds
// refuse, at submission, tasks whose stored spec says split: test or
// split: excluded, and accept split: train and specs without a split.
func TestGenerationSplitGuardReadsSpecs(t *testing.T) {
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	b, st := openBuiltins(t, cfg)
	defer st.Close()
	defer b.Close()
	for id, split := range map[string]string{"held": "split: test\n", "out": "split: excluded\n", "seen": "split: train\n", "plain": ""} {
		dir := filepath.Join(cfg.DataDir, "tasks", id)
		spec := "id: " + id + "\nprompt: do it\nlimits: {episode_wall_time: 1m, agent_turns: 3}\n" + split
		if err := os.MkdirAll(dir, 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "spec.yaml"), []byte(spec), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []struct {
		name  string
		v     func(json.RawMessage) error
		extra string
	}{{"generation", generation.Kind(b.Services()).Validate, ""}, {"cycle", generation.CycleKind(b.Services()).Validate, `,"generations":2`}} {
		for task, split := range map[string]string{"held": "test", "out": "excluded"} {
			err := k.v(json.RawMessage(`{"tasks":["seen","` + task + `"]` + k.extra + `}`))
			if err == nil || !strings.Contains(err.Error(), "task "+task+` has split "`+split+`"`) {
				t.Errorf("%s on %s: %v", k.name, task, err)
			}
		}
		if err := k.v(json.RawMessage(`{"tasks":["seen","plain"]` + k.extra + `}`)); err != nil {
			t.Errorf("%s on train tasks: %v", k.name, err)
		}
	}
}
