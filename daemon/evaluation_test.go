package daemon_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mass-dev/mass/agents/model/scripted"
	"github.com/mass-dev/mass/daemon"
	"github.com/mass-dev/mass/daemon/config"
	"github.com/mass-dev/mass/jobkind"
)

// TestLoopKindsRefuseJudges: with external judges configured, search,
// generation and cycle refuse a judge in any role at submission, and the
// evaluation kinds are registered; another model passes to the kind's own
// validation.
func TestLoopKindsRefuseJudges(t *testing.T) {
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Judges = []config.Judge{{Model: scripted.JudgeNames[0], Seeds: []int64{42}}}
	b, err := daemon.NewBuiltins(cfg, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	kinds := map[string]jobkind.Kind{}
	for _, k := range b.Kinds() {
		kinds[k.Name] = k
	}
	if _, ok := kinds["rollout"]; !ok {
		t.Error("no rollout kind")
	}
	if _, ok := kinds["judge-pairs"]; !ok {
		t.Error("no judge-pairs kind")
	}
	j := scripted.JudgeNames[0]
	for kind, params := range map[string][]string{
		"search":     {`{"model":"` + j + `"}`, `{"judge_model":"` + j + `"}`, `{"model":"scripted","optimizer_model":"` + j + `"}`},
		"generation": {`{"tasks":["a"],"model":"` + j + `"}`},
		"cycle":      {`{"tasks":["a"],"model":"` + j + `","generations":1}`},
	} {
		for _, p := range params {
			if err := kinds[kind].Validate(json.RawMessage(p)); err == nil || !strings.Contains(err.Error(), "external judge") {
				t.Errorf("%s %s: %v", kind, p, err)
			}
		}
	}
	if err := kinds["search"].Validate(json.RawMessage(`{"model":"scripted"}`)); err != nil {
		t.Errorf("search with the scripted model: %v", err)
	}
	// The split guard reads task a's spec at submission.
	spec := filepath.Join(cfg.DataDir, "tasks", "a", "spec.yaml")
	if err := os.MkdirAll(filepath.Dir(spec), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(spec, []byte("id: a\nprompt: p\nlimits: {episode_wall_time: 1m, agent_turns: 3}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := kinds["generation"].Validate(json.RawMessage(`{"tasks":["a"],"model":"scripted"}`)); err != nil {
		t.Errorf("generation with the scripted model: %v", err)
	}
}
