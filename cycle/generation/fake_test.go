package generation

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// world is a fake of the parts a generation uses, all on real files under
// root: episode records with a seeded hidden quality, judgments that
// prefer the better workspace with a seeded error rate, and folders for the
// dataset, adapter and merged model. Every call is appended to calls.log so
// that a test (or a restarted process) can count what ran.
type world struct {
	root     string
	delay    time.Duration // per episode or judgment
	trainFor time.Duration // how long Train takes
	// failEvery: an episode whose seed is divisible by it misses an
	// output; per task, so a test can force top-ups and exclusions.
	failEvery map[string]int64
	invalid   float64 // share of judgments that never parse
	// metrics: Train appends this many step records (and a validation
	// halfway) to metrics.jsonl, trainFor/metrics apart, as mass-train does.
	metrics int
	mu      sync.Mutex
}

func (w *world) log(format string, a ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	f, err := os.OpenFile(filepath.Join(w.root, "calls.log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	fmt.Fprintf(f, format+"\n", a...)
}

func (w *world) calls() []string {
	b, _ := os.ReadFile(filepath.Join(w.root, "calls.log"))
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

func sleep(ctx context.Context, d time.Duration) error {
	if d == 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// quality is the hidden worth of the episode run with seed.
func quality(seed int64) float64 { return rand.New(rand.NewPCG(uint64(seed), 7)).Float64() }

type episodeRecord struct {
	Task    string  `json:"task"`
	Quality float64 `json:"quality"`
}

func (w *world) Retained(_ context.Context, task string) (Retained, error) {
	switch {
	case strings.HasPrefix(task, "nosearch"):
		return Retained{}, fmt.Errorf("task %s has no search", task)
	case strings.HasPrefix(task, "lost"):
		return Retained{Workflow: "team"}, nil
	}
	return Retained{Workflow: "team of " + task, BeatsReference: true}, nil
}

func (w *world) Run(ctx context.Context, r EpisodeRequest) (EpisodeResult, error) {
	w.log("episode %s %s %d start %s seed=%d model=%s", r.Task, r.Slot, r.Attempt, r.ID, r.Seed, r.Model)
	if err := sleep(ctx, w.delay); err != nil {
		return EpisodeResult{}, err
	}
	rec := episodeRecord{Task: r.Task, Quality: quality(r.Seed)}
	b, _ := json.Marshal(rec)
	if err := writeFile(filepath.Join(w.root, "episodes", r.ID+".json"), b); err != nil {
		return EpisodeResult{}, err
	}
	res := EpisodeResult{EpisodeID: r.ID, Tokens: 1000 + r.Seed%100}
	if n := w.failEvery[r.Task]; n > 0 && r.Seed%n == 0 {
		res.Reason = "a required output is missing"
	}
	w.log("episode %s %s %d finish %s", r.Task, r.Slot, r.Attempt, r.ID)
	return res, nil
}

func (w *world) Close(_ context.Context, id string) error {
	w.log("close %s", id)
	return nil
}

func (w *world) quality(id string) (float64, error) {
	b, err := os.ReadFile(filepath.Join(w.root, "episodes", id+".json"))
	if err != nil {
		return 0, err
	}
	var r episodeRecord
	return r.Quality, json.Unmarshal(b, &r)
}

func (w *world) Judge(ctx context.Context, r JudgeRequest) (Verdict, error) {
	w.log("judge %s %s %d start seed=%d model=%s", r.Task, r.Key, r.Attempt, r.Seed, r.Model)
	if err := sleep(ctx, w.delay); err != nil {
		return Verdict{}, err
	}
	qa, err := w.quality(r.A)
	if err != nil {
		return Verdict{}, err
	}
	qb, err := w.quality(r.B)
	if err != nil {
		return Verdict{}, err
	}
	rng := rand.New(rand.NewPCG(uint64(r.Seed), 11))
	v := Verdict{Tokens: 200}
	switch u := rng.Float64(); {
	case u < w.invalid:
		v.Winner = "invalid"
	case qa-qb > 0.05 || (qa > qb && u > 0.9):
		v.Winner = "A"
	case qb-qa > 0.05 || (qb > qa && u > 0.9):
		v.Winner = "B"
	default:
		v.Winner = "tie"
	}
	w.log("judge %s %s %d finish", r.Task, r.Key, r.Attempt)
	return v, nil
}

func (w *world) Build(_ context.Context, r DatasetRequest) (Dataset, error) {
	dir := filepath.Join(w.root, "datasets", r.Name)
	if err := writeJSON(filepath.Join(dir, "selection.json"), Selection{Train: r.Train, Val: r.Val}); err != nil {
		return Dataset{}, err
	}
	w.log("dataset %s", r.Name)
	return Dataset{Dir: dir, StoredSupervised: int64(500 * (len(r.Train) + len(r.Val)))}, nil
}

func (w *world) Train(ctx context.Context, r TrainRequest) (Training, error) {
	w.log("train start")
	if err := w.writeMetrics(ctx, r.Out); err != nil {
		return Training{}, err
	}
	if err := sleep(ctx, w.trainFor); err != nil {
		return Training{}, err
	}
	adapter := filepath.Join(r.Out, "best")
	if err := writeFile(filepath.Join(adapter, "adapter_config.json"), []byte(`{"r":64}`)); err != nil {
		return Training{}, err
	}
	w.log("train finish")
	return Training{Adapter: adapter, BestStep: 150, BestValLoss: 1.5, Steps: 200, ProcessedSupervised: 4500}, nil
}

func (w *world) writeMetrics(ctx context.Context, out string) error {
	if w.metrics == 0 {
		return nil
	}
	if err := os.MkdirAll(out, 0o750); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(out, MetricsFile), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	for s := 1; s <= w.metrics; s++ {
		if err := sleep(ctx, w.trainFor/time.Duration(w.metrics)); err != nil {
			return err
		}
		fmt.Fprintf(f, `{"step":%d,"steps":%d,"loss":%g,"tok_s":1500,"eta_s":%d,"processed_supervised_tokens":%d}`+"\n",
			s, w.metrics, 3.0/float64(s), w.metrics-s, 100*s)
		if s == w.metrics/2 {
			fmt.Fprintf(f, `{"step":%d,"val_loss":1.75,"steps":0}`+"\n", s)
		}
	}
	return nil
}

func (w *world) Export(_ context.Context, r ExportRequest) (Export, error) {
	merged := filepath.Join(r.Out, "merged")
	if err := writeFile(filepath.Join(merged, "config.json"), []byte(`{}`)); err != nil {
		return Export{}, err
	}
	w.log("export")
	return Export{Adapter: r.Adapter, Merged: merged}, nil
}

func (w *world) Register(_ context.Context, m Model) error {
	w.log("register %s %d %s", m.Name, m.G, m.Parent)
	return writeJSON(filepath.Join(w.root, "models", m.Name+".json"), m)
}

// config is a small generation over tasks in w.
func (w *world) config(tasks ...string) Config {
	return Config{
		G: 1, Dir: filepath.Join(w.root, "generations", "1"), Seed: 42,
		Parent: Model{Name: "base", G: 0, Weights: "/models/base", Tokenizer: "/models/base/tokenizer.json"},
		Tasks:  tasks, Episodes: 8, MinSuccess: 6, Cap: 10, Opponents: 4, Train: 5, Val: 1, Concurrency: 3,
		Workflows: w, Runner: w, Judge: w, Datasets: w, Trainer: w, Exporter: w, Models: w,
	}
}

// Split answers by the task's name: "test-…" is held out, "excluded-…"
// excluded, anything else train.
func (w *world) Split(_ context.Context, task string) (string, error) {
	switch {
	case strings.HasPrefix(task, "test-"):
		return "test", nil
	case strings.HasPrefix(task, "excluded-"):
		return "excluded", nil
	case strings.HasPrefix(task, "ghost"):
		return "", fmt.Errorf("no task %s", task)
	}
	return "train", nil
}

func (w *world) Splits() Splits { return w }
