package daemon_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/mass-dev/mass/cycle/generation"
	"github.com/mass-dev/mass/cycle/search"
	"github.com/mass-dev/mass/daemon/store"
)

// TestGenerationScriptedThroughMassd runs a short search and then one
// generation of the scripted model on an example task against a real
// massd with real sandboxes: teacher episodes, the ring of judgments,
// Bradley–Terry, selection, a dataset of exactly the selected episodes, a
// short LoRA run on the tiny model, the adapter and merged model, and
// gen-1 registered with its parent.
func TestGenerationScriptedThroughMassd(t *testing.T) {
	r := newSearchRig(t, nil)
	cmd := exec.Command("go", "build", "-o", r.bin+"/", "./cmd/mass-train")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build mass-train: %v\n%s", err, out)
	}
	task := ungraded(t, "../examples/tasks/sales-analysis")
	out, err := r.massctl("search", "--task", task, "--iterations", "3", "--seed", "0", "--model", "scripted", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var ss search.Summary
	if err := json.Unmarshal(out, &ss); err != nil || !ss.BeatsReference {
		t.Fatalf("search: %v %s", err, out)
	}
	start := time.Now()
	out, err = r.massctl("generation", "start", "--tasks", ss.Task, "--model", "scripted", "--episodes", "6", "--min-success", "4",
		"--cap", "8", "--opponents", "2", "--train", "3", "--val", "1", "--train-steps", "1", "--seed", "1", "--json")
	if err != nil {
		show, _ := r.massctl("generation", "show", "1", "--json")
		why, _ := os.ReadFile(filepath.Join(r.data, "generations", "1", "collect", ss.Task, "outcome.json"))
		t.Fatalf("%v\n%s\n%s", err, show, why)
	}
	t.Logf("generation: %s", time.Since(start).Round(time.Second))
	var s generation.Summary
	if err := json.Unmarshal(out, &s); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if s.Generation != 1 || s.Status != generation.StatusDone || len(s.Tasks) != 1 {
		t.Fatalf("summary %s", out)
	}
	ts := s.Tasks[0]
	if ts.Episodes < 6 || ts.Successful < 4 || ts.Judgments+ts.InvalidJudgments != ts.Successful || len(ts.Train) != 3 || len(ts.Val) != 1 {
		t.Errorf("task %+v", ts)
	}
	for _, st := range s.Stages {
		t.Logf("stage %-8s %6.1fs", st.Name, st.Seconds)
	}
	t.Logf("tokens %+v", s.Tokens)
	man := readJSON[struct {
		Episodes int `json:"episodes"`
	}](t, filepath.Join(s.Dataset, "manifest.json"))
	if man.Episodes != 3 {
		t.Errorf("dataset built from %d episodes, want the 3 selected", man.Episodes)
	}
	for _, p := range []string{filepath.Join(s.Adapter, "adapter_config.json"), filepath.Join(s.Merged, "config.json")} {
		if _, err := os.Stat(p); err != nil {
			t.Error(err)
		}
	}
	if s.Tokens.Generated == 0 || s.Tokens.StoredSupervised == 0 || s.Tokens.ProcessedSupervised == 0 {
		t.Errorf("tokens %+v", s.Tokens)
	}
	out, err = r.massctl("model", "list", "--json")
	var ms []store.Model
	if err != nil || json.Unmarshal(out, &ms) != nil || len(ms) != 1 || ms[0].Name != "gen-1" || ms[0].G != 1 || ms[0].Parent != "scripted" {
		t.Errorf("model list: %v %s", err, out)
	}
}

// ungraded copies an example task without its grader: the scripted
// executor's outputs do not pass the example graders, and this test is
// about the generation's stages, not the grader (the predicate still checks
// outputs and guards).
func ungraded(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if out, err := exec.Command("cp", "-r", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("copy task: %v %s", err, out)
	}
	spec := filepath.Join(dst, "task.yaml")
	b, err := os.ReadFile(spec)
	if err != nil {
		t.Fatal(err)
	}
	b = regexp.MustCompile(`(?m)^(hidden_paths|grader):\n(  .*\n)+`).ReplaceAll(b, nil)
	if err := os.WriteFile(spec, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return spec
}
