package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mass-dev/mass/cycle/generation"
	"github.com/mass-dev/mass/generationfmt"
	"github.com/mass-dev/mass/jobkind"
)

// parts are small fakes of the generation's own interfaces: every task
// beats its reference, an episode's worth is its seed, the judge prefers
// the larger seed, and the trainer and exporter write folders.
type parts struct {
	root string
	n    atomic.Int64
}

func (p *parts) Parts(_ context.Context, _ jobkind.Job, _ jobkind.Reporter, parent string) (generation.Parts, error) {
	if parent == "" {
		parent = "base"
	}
	g := 0
	fmt.Sscanf(parent, "gen-%d", &g)
	return generation.Parts{Parent: generation.Model{Name: parent, G: g, Weights: p.root, Tokenizer: p.root},
		Workflows: p, Runner: p, Judge: p, Datasets: p, Trainer: p, Exporter: p, Models: p}, nil
}
func (p *parts) Splits() generation.Splits { return p }
func (p *parts) Split(_ context.Context, task string) (string, error) {
	if strings.HasPrefix(task, "held") {
		return "test", nil
	}
	return "train", nil
}
func (p *parts) Retained(context.Context, string) (generation.Retained, error) {
	return generation.Retained{Workflow: "w", BeatsReference: true}, nil
}
func (p *parts) Run(_ context.Context, r generation.EpisodeRequest) (generation.EpisodeResult, error) {
	p.n.Add(1)
	return generation.EpisodeResult{EpisodeID: fmt.Sprintf("ep-%d", r.Seed), Tokens: 10}, nil
}
func (p *parts) Close(context.Context, string) error { return nil }
func (p *parts) Judge(_ context.Context, r generation.JudgeRequest) (generation.Verdict, error) {
	if r.A > r.B {
		return generation.Verdict{Winner: "A", Tokens: 1}, nil
	}
	return generation.Verdict{Winner: "B", Tokens: 1}, nil
}
func (p *parts) Build(_ context.Context, r generation.DatasetRequest) (generation.Dataset, error) {
	return generation.Dataset{Dir: filepath.Join(p.root, r.Name), StoredSupervised: int64(len(r.Train) + len(r.Val))}, nil
}
func (p *parts) Train(_ context.Context, r generation.TrainRequest) (generationfmt.Training, error) {
	return generationfmt.Training{Adapter: filepath.Join(r.Out, "best"), Steps: 3, BestStep: 3, ProcessedSupervised: 7}, nil
}
func (p *parts) Export(_ context.Context, r generation.ExportRequest) (generation.Export, error) {
	return generation.Export{Adapter: r.Adapter, Merged: filepath.Join(r.Out, "merged")}, nil
}
func (p *parts) Register(context.Context, generation.Model) error { return nil }

func TestGenerationCommands(t *testing.T) {
	p := &parts{root: t.TempDir()}
	cfg := startDaemon(t, generation.NewKind(p))
	sock := "--socket=" + cfg.Socket
	out, err := run(t, sock, "generation", "start", "--tasks", "a,b", "--episodes", "4", "--min-success", "3", "--cap", "5",
		"--opponents", "2", "--train", "2", "--val", "1", "--json")
	if err != nil {
		t.Fatalf("generation start: %v\n%s", err, out)
	}
	var s struct {
		Generation int    `json:"generation"`
		Dir        string `json:"dir"`
		Tasks      []struct {
			ID         string   `json:"id"`
			Episodes   int      `json:"episodes"`
			Successful int      `json:"successful"`
			Judgments  int      `json:"judgments"`
			Invalid    *int     `json:"invalid_judgments"`
			Train      []string `json:"train"`
			Val        []string `json:"val"`
			Ranking    []struct {
				ID    string
				Score float64
				Rank  int
			} `json:"ranking"`
		} `json:"tasks"`
		Excluded []struct{ ID, Reason string } `json:"excluded"`
		Adapter  string                        `json:"adapter"`
		Merged   string                        `json:"merged"`
		Tokens   map[string]int64              `json:"tokens"`
	}
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	if s.Generation != 1 || len(s.Tasks) != 2 || s.Tasks[0].Episodes != 4 || s.Tasks[0].Judgments != 4 || s.Tasks[0].Invalid == nil ||
		len(s.Tasks[0].Ranking) != 4 || len(s.Tasks[0].Train) != 2 || len(s.Tasks[0].Val) != 1 || s.Merged == "" || s.Tokens["generated"] != 8*10+8 {
		t.Errorf("generation start --json: %s", out)
	}
	if _, err := os.Stat(filepath.Join(cfg.DataDir, "generations", "1", "generation.json")); err != nil {
		t.Error(err)
	}
	out, err = run(t, sock, "generation", "list")
	if err != nil || !strings.Contains(out, "gen-1") || !strings.Contains(out, "done") {
		t.Errorf("generation list: %v\n%s", err, out)
	}
	out, err = run(t, sock, "generation", "show", "1")
	if err != nil || !strings.Contains(out, "task a: 4 runs, 4 eligible, 4 judgments (0 invalid); train 2, val 1") || !strings.Contains(out, "stored supervised 6") {
		t.Errorf("generation show: %v\n%s", err, out)
	}
	if _, err := run(t, sock, "generation", "show", "7"); err == nil {
		t.Error("show of a missing generation succeeded")
	}
	if out, err := run(t, sock, "model", "list", "--json"); err != nil || strings.TrimSpace(out) != "[]" {
		t.Errorf("model list: %v %s", err, out)
	}
}

// TestGenerationRefusesHeldOutTask: generation start and cycle run with a
// split: test task fail (massctl exits non-zero) with massd's 400 naming
// the task and its split, and no job is queued.
func TestGenerationRefusesHeldOutTask(t *testing.T) {
	p := &parts{root: t.TempDir()}
	cfg := startDaemon(t, generation.NewKind(p), generation.NewCycleKind(cycleParts{p}))
	sock := "--socket=" + cfg.Socket
	for _, args := range [][]string{{"generation", "start"}, {"cycle", "run", "--generations", "2"}} {
		out, err := run(t, append(append([]string{sock}, args...), "--tasks", "a,held-1")...)
		if err == nil || !strings.Contains(err.Error(), "task held-1") || !strings.Contains(err.Error(), `split "test"`) ||
			!strings.Contains(err.Error(), "invalid") {
			t.Errorf("%v: %v\n%s", args, err, out)
		}
	}
	out, err := run(t, sock, "job", "list", "--json")
	if err != nil || strings.Contains(out, `"id"`) {
		t.Errorf("jobs after refusals: %v %s", err, out)
	}
}

type cycleParts struct{ *parts }

func (c cycleParts) Searches(context.Context, jobkind.Job, jobkind.Reporter) (generation.Searches, error) {
	return c, nil
}
func (c cycleParts) Search(ctx context.Context, _, task, _ string, _ int64, _ generation.SearchOptions) (generation.Retained, error) {
	return c.Retained(ctx, task)
}
