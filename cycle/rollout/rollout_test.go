package rollout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/mass-dev/mass/cycle/generation"
)

// runner records every episode it is asked for; the first attempt of
// slot failAt errors, and cancel (when set) ends the run after n episodes.
type runner struct {
	mu      sync.Mutex
	runs    []EpisodeRequest
	closed  []string
	failAt  int
	cancelN int
	cancel  context.CancelFunc
}

func (r *runner) Run(ctx context.Context, req EpisodeRequest) (EpisodeResult, error) {
	r.mu.Lock()
	r.runs = append(r.runs, req)
	n := len(r.runs)
	r.mu.Unlock()
	if r.cancel != nil && n > r.cancelN {
		r.cancel()
		<-ctx.Done()
		return EpisodeResult{}, ctx.Err()
	}
	if req.Index == r.failAt && req.Attempt == 1 {
		return EpisodeResult{}, errors.New("sandbox down")
	}
	return EpisodeResult{EpisodeID: req.ID, Exit: "completed", Success: true, Graded: true, Passed: req.Seed%2 == 0, CompletionTokens: 100}, nil
}

func (r *runner) Close(_ context.Context, id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = append(r.closed, id)
	return nil
}

func config(dir string, r Episodes) Config {
	return Config{Name: "t", Dir: dir, Tasks: []string{"a", "b"}, Models: []string{"base", "gen-1"}, Episodes: 4, Seed: 9,
		Concurrency: 2, Attempts: 2, Runner: r}
}

// TestPairedSeedsAndRetry: episode i of every model on a task runs with
// the same seed, seeds differ between indexes, and a failed attempt is
// retried as attempt 2 of its slot.
func TestPairedSeedsAndRetry(t *testing.T) {
	dir := t.TempDir()
	r := &runner{failAt: 2}
	sum, err := Execute(context.Background(), config(dir, r))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(sum.Runs), 2*2*4; got != want {
		t.Fatalf("%d runs, want %d", got, want)
	}
	seeds := map[string]int64{}
	for _, x := range sum.Runs {
		k := fmt.Sprintf("%s/%d", x.Task, x.Index)
		if s, ok := seeds[k]; ok && s != x.Seed {
			t.Errorf("%s: seeds %d and %d across models", k, s, x.Seed)
		}
		seeds[k] = x.Seed
		if x.Seed != SeedFor(9, x.Task, x.Index) || x.EpisodeID == "" {
			t.Errorf("run %+v", x)
		}
	}
	if seeds["a/0"] == seeds["a/1"] || seeds["a/0"] == seeds["b/0"] {
		t.Errorf("seeds repeat across indexes or tasks: %v", seeds)
	}
	b, err := generation.OpenBook[EpisodeResult](BookPath(dir, "a", "gen-1"))
	if err != nil {
		t.Fatal(err)
	}
	s := b.Slots()[2]
	if len(s.Attempts) != 2 || s.Attempts[0].Status != generation.AttemptError || s.Attempts[1].Status != generation.AttemptFinished {
		t.Errorf("slot 02: %+v", s.Attempts)
	}
	var onDisk Summary
	if ok, err := generation.ReadJSON(filepath.Join(dir, SummaryFile), &onDisk); !ok || err != nil || len(onDisk.Runs) != len(sum.Runs) {
		t.Errorf("rollout.json: %v %v", ok, err)
	}
}

// TestResumeRunsOnlyUnfinished: a rollout cut off after a few episodes
// resumes with the finished slots kept (never rerun) and the cut-off
// attempts closed and retried as the next attempt.
func TestResumeRunsOnlyUnfinished(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	first := &runner{failAt: -1, cancelN: 5, cancel: cancel}
	if _, err := Execute(ctx, config(dir, first)); !errors.Is(err, context.Canceled) {
		t.Fatalf("first run: %v", err)
	}
	second := &runner{failAt: -1}
	sum, err := Execute(context.Background(), config(dir, second))
	if err != nil {
		t.Fatal(err)
	}
	if got := len(first.runs) + len(second.runs) - len(second.closed); got != 16 {
		b, _ := json.Marshal(sum.Runs)
		t.Errorf("%d + %d episodes started, %d closed: finished slots rerun or slots lost\n%s", len(first.runs), len(second.runs), len(second.closed), b)
	}
	if len(second.closed) == 0 || len(second.runs) >= 16 {
		t.Errorf("resume closed %d interrupted attempts and ran %d episodes", len(second.closed), len(second.runs))
	}
	for _, x := range second.runs {
		if x.Attempt != 1 && x.Attempt != 2 {
			t.Errorf("attempt %d", x.Attempt)
		}
	}
}

func TestParseParams(t *testing.T) {
	p, err := ParseParams(json.RawMessage(`{"tasks":["projectile-sim"],"models":["base","gen-1"]}`))
	if err != nil || p.Episodes != DefaultEpisodes || p.Concurrency != DefaultConcurrency {
		t.Fatalf("%+v %v", p, err)
	}
	for _, bad := range []string{`{"tasks":[],"models":["a","b"]}`, `{"tasks":["x"],"models":["a"]}`, `{"tasks":["x"],"models":["a","a"]}`,
		`{"tasks":["x"],"models":["a","b"],"episodes":-1}`, `{"tasks":["../x"],"models":["a","b"]}`, `{"tasks":["x"],"models":["a","b"],"modle":"x"}`} {
		if _, err := ParseParams(json.RawMessage(bad)); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}
