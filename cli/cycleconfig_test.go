package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mass-dev/mass/cycle/generation"
	"github.com/mass-dev/mass/generationfmt"
)

// TestCycleRunFromConfig: cycle run --config checks the task lists against
// massd's specs (a disagreement names both), --dry-run prints the plan
// with tasks not added marked and submits nothing, and a run takes the
// file's sizes with the flags given laid over them.
func TestCycleRunFromConfig(t *testing.T) {
	p := &parts{root: t.TempDir()}
	cfg := startDaemon(t, generation.NewKind(p), generation.NewCycleKind(cycleParts{p}))
	sock := "--socket=" + cfg.Socket
	for _, spec := range []string{"sales-analysis", "projectile-sim"} {
		if out, err := run(t, sock, "task", "add", "../examples/tasks/"+spec+"/task.yaml"); err != nil {
			t.Fatalf("task add %s: %v %s", spec, err, out)
		}
	}
	write := func(doc string) string {
		f := filepath.Join(t.TempDir(), "cycle.yaml")
		if err := os.WriteFile(f, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	bad := write("tasks: {train: [sales-analysis, projectile-sim]}\n")
	if out, err := run(t, sock, "cycle", "run", "--config", bad, "--dry-run"); err == nil ||
		!strings.Contains(err.Error(), "task projectile-sim: the config lists it in tasks.train but its spec says split: test") {
		t.Errorf("spec disagreement: %v\n%s", err, out)
	}
	good := write("count: 2\ntasks: {train: [sales-analysis], test: [projectile-sim], excluded: [query221]}\n" +
		"collection: {candidates: 4, train_ranks: 2, validation_rank: 3, cap: 5}\nranking: {opponents: 2}\ntraining: {steps: 3}\n")
	out, err := run(t, sock, "cycle", "run", "--config", good, "--dry-run")
	if err != nil || !strings.Contains(out, "query221 (not added)") || strings.Contains(out, "sales-analysis (not added)") ||
		!strings.Contains(out, "3 steps × 3 windows per step") || !strings.Contains(out, "generation 2 → gen-2") {
		t.Errorf("dry run: %v\n%s", err, out)
	}
	if jobs, _ := run(t, sock, "job", "list", "--json"); strings.Contains(jobs, `"id"`) {
		t.Errorf("a dry run submitted a job: %s", jobs)
	}
	out, err = run(t, sock, "cycle", "run", "--config", good, "--generations", "1", "--episodes", "5", "--json")
	if err != nil {
		t.Fatalf("cycle run --config: %v\n%s", err, out)
	}
	var res struct {
		Generations []generation.CycleStep `json:"generations"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Generations) != 1 {
		t.Fatalf("result %v: %s", err, out)
	}
	s, err := generationfmt.ReadSummary(res.Generations[0].Dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Tasks) != 1 || s.Tasks[0].Episodes != 5 || len(s.Tasks[0].Train) != 2 || len(s.Tasks[0].Val) != 1 {
		t.Errorf("generation from the config: %+v", s.Tasks)
	}
}
