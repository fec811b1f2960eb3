package generation

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/generationfmt"
	"github.com/mass-dev/mass/jobkind"
)

type reporter struct {
	mu     sync.Mutex
	result any
	stages []string
}

func (r *reporter) Event(string, string, map[string]any) {}
func (r *reporter) Progress(p jobkind.Progress) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stages = append(r.stages, p.Stage)
}
func (r *reporter) SetResult(v any)               { r.result = v }
func (r *reporter) Episode(jobkind.EpisodeRecord) {}
func (r *reporter) Logger() *slog.Logger          { return slog.New(slog.DiscardHandler) }
func (w *world) Parts(_ context.Context, _ jobkind.Job, _ jobkind.Reporter, parent string) (Parts, error) {
	m := Model{Name: "base", Weights: "/models/base", Tokenizer: "/models/base/tokenizer.json"}
	if parent != "" && parent != "base" {
		ok, err := readJSON(filepath.Join(w.root, "models", parent+".json"), &m)
		if err != nil || !ok {
			return Parts{}, fmt.Errorf("no model %s (%v)", parent, err)
		}
	}
	return Parts{Parent: m, Workflows: w, Runner: w, Judge: w, Datasets: w, Trainer: w, Exporter: w, Models: w}, nil
}

func (w *world) Searches(context.Context, jobkind.Job, jobkind.Reporter) (Searches, error) {
	return w, nil
}

func (w *world) Search(ctx context.Context, id, task, model string, seed int64, _ SearchOptions) (Retained, error) {
	w.log("search %s %s %s seed=%d", id, task, model, seed)
	return w.Retained(ctx, task)
}

func job(root, kind string, params any) jobkind.Job {
	b, _ := json.Marshal(params)
	l := datadir.New(root)
	return jobkind.Job{ID: "job-1", Kind: kind, Params: b, Attempt: 1, Layout: l, WorkDir: l.Job("job-1")}
}

var small = Params{Tasks: []string{"alpha", "lost-1"}, Episodes: 8, MinSuccess: 6, Cap: 10, Opponents: 4, Train: 5, Val: 1, Seed: 3}

func TestGenerationKind(t *testing.T) {
	w := &world{root: t.TempDir()}
	k := NewKind(w)
	if err := k.Validate(json.RawMessage(`{"tasks":["a"],"opponents":3}`)); err == nil {
		t.Error("odd opponents accepted")
	}
	if err := k.Validate(json.RawMessage(`{"tasks":["a"],"bogus":1}`)); err == nil {
		t.Error("unknown field accepted")
	}
	rep := &reporter{}
	if err := k.Run(context.Background(), job(w.root, KindName, small), rep); err != nil {
		t.Fatal(err)
	}
	sum := rep.result.(Summary)
	if sum.Dir != filepath.Join(w.root, "generations", "1") || sum.Status != StatusDone || len(sum.Tasks) != 1 {
		t.Fatalf("summary %+v", sum)
	}
	other := job(w.root, KindName, small)
	other.ID = "job-2"
	if err := k.Run(context.Background(), other, rep); err == nil || !strings.Contains(err.Error(), "belongs to job job-1") ||
		!strings.Contains(err.Error(), "massctl generation rm 1") || !strings.Contains(err.Error(), "massctl generation retry 1") {
		t.Errorf("second job on generation 1: %v", err)
	}
}

func TestCycleKind(t *testing.T) {
	w := &world{root: t.TempDir()}
	k := NewCycleKind(w)
	if err := k.Validate(json.RawMessage(`{"tasks":["a"]}`)); err == nil {
		t.Error("zero generations accepted")
	}
	rep := &reporter{}
	j := job(w.root, CycleKindName, CycleParams{GenerationParams: small, Generations: 2})
	if err := k.Run(context.Background(), j, rep); err != nil {
		t.Fatal(err)
	}
	var m Model
	if _, err := readJSON(filepath.Join(w.root, "models", "gen-2.json"), &m); err != nil || m.G != 2 || m.Parent != "gen-1" {
		t.Fatalf("gen-2 registered as %+v (%v)", m, err)
	}
	calls := w.calls()
	for _, want := range []string{"search job-1-g1-0 alpha base", "search job-1-g2-0 alpha gen-1", "search job-1-g2-1 lost-1 gen-1"} {
		if count(calls, want) != 1 {
			t.Errorf("want one %q", want)
		}
	}
	byModel := map[string]int{}
	for _, l := range calls {
		if i := strings.Index(l, "model="); i > 0 {
			byModel[l[i:]]++
		}
	}
	if byModel["model=base"] == 0 || byModel["model=gen-1"] != byModel["model=base"] {
		t.Errorf("episodes and judgments by model: %v (generation 2 must use gen-1 as generation 1 used base)", byModel)
	}
	s2, err := generationfmt.ReadSummary(filepath.Join(w.root, "generations", "2"))
	if err != nil || s2.Parent != "gen-1" || s2.Status != StatusDone {
		t.Fatalf("generation 2: %+v %v", s2, err)
	}
	before := len(calls)
	if err := k.Run(context.Background(), j, rep); err != nil {
		t.Fatal(err)
	}
	if n := len(w.calls()) - before; n != 0 {
		t.Errorf("resumed finished cycle made %d calls", n)
	}
}

// TestRemoveDir: a generation folder goes whole, and so does trash an
// interrupted removal left; its siblings stay.
func TestRemoveDir(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"1/train/best", "2", TrashPrefix + "3-5/x"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o750); err != nil {
			t.Fatal(err)
		}
	}
	if err := generationfmt.RemoveDir(filepath.Join(root, "1")); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(root)
	if len(ents) != 1 || ents[0].Name() != "2" {
		t.Errorf("left %v, want only 2", ents)
	}
	if err := generationfmt.RemoveDir(filepath.Join(root, "7")); err == nil {
		t.Error("removing a missing folder succeeded")
	}
}
