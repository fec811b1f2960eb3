package rollout

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/jobkind"
)

type splits map[string]string

func (s splits) Split(_ context.Context, t string) (string, error) { return s[t], nil }

type env struct {
	r *runner
	s splits
}

func (e env) Setup(context.Context, jobkind.Job, jobkind.Reporter, []string) (Episodes, Tasks, error) {
	return e.r, e.s, nil
}

type reporter struct{ result any }

func (*reporter) Event(string, string, map[string]any) {}
func (*reporter) Progress(jobkind.Progress)            {}
func (r *reporter) SetResult(v any)                    { r.result = v }
func (*reporter) Episode(jobkind.EpisodeRecord)        {}
func (*reporter) Logger() *slog.Logger                 { return slog.New(slog.DiscardHandler) }

// TestKindRunsHeldOutTasksOnly: a task of the train split is refused
// before any episode; a test task runs, in evals/<job id> by default.
func TestKindRunsHeldOutTasksOnly(t *testing.T) {
	r := &runner{failAt: -1}
	k := NewKind(env{r, splits{"held": "test", "seen": "train", "out": "excluded"}})
	l := datadir.New(t.TempDir())
	job := jobkind.Job{ID: "job-1", Layout: l, Params: []byte(`{"tasks":["held","seen"],"models":["base","gen-1"],"episodes":1}`)}
	if err := k.Run(context.Background(), job, &reporter{}); err == nil || !strings.Contains(err.Error(), "split: test") || len(r.runs) != 0 {
		t.Fatalf("train task: %v, %d episodes", err, len(r.runs))
	}
	job.Params = []byte(`{"tasks":["held"],"models":["base","gen-1"],"episodes":2}`)
	rep := &reporter{}
	if err := k.Run(context.Background(), job, rep); err != nil {
		t.Fatal(err)
	}
	if s, ok := rep.result.(Summary); !ok || len(s.Runs) != 4 || s.Name != "job-1" {
		t.Fatalf("result %+v", rep.result)
	}
	if _, err := Load(l, "job-1"); err != nil {
		t.Error(err)
	}
	allowed := jobkind.Job{ID: "job-3", Layout: l, Params: []byte(`{"name":"train-run","tasks":["held","seen"],"models":["base","gen-1"],"episodes":1,"allow_train_tasks":true}`)}
	if err := k.Run(context.Background(), allowed, &reporter{}); err != nil {
		t.Errorf("train task with allow_train_tasks: %v", err)
	}
	excluded := jobkind.Job{ID: "job-4", Layout: l, Params: []byte(`{"name":"ex","tasks":["out"],"models":["base","gen-1"],"episodes":1,"allow_train_tasks":true}`)}
	if err := k.Run(context.Background(), excluded, &reporter{}); err == nil || !strings.Contains(err.Error(), `task out has split "excluded"`) {
		t.Errorf("excluded task with allow_train_tasks: %v", err)
	}
	other := jobkind.Job{ID: "job-2", Layout: l, Params: []byte(`{"name":"job-1","tasks":["held"],"models":["base","gen-1"]}`)}
	if err := k.Run(context.Background(), other, &reporter{}); err == nil || !strings.Contains(err.Error(), "belongs to job job-1") {
		t.Errorf("second job on the same evaluation: %v", err)
	}
}

func FuzzParseParams(f *testing.F) {
	f.Add([]byte(`{"tasks":["projectile-sim"],"models":["base","gen-1"],"episodes":10}`))
	f.Add([]byte(`{"tasks":["x"],"models":["a","a"]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParseParams(b)
		if err != nil {
			return
		}
		if len(p.Models) < 2 || len(p.Tasks) == 0 || p.Episodes < 1 || p.Concurrency < 1 {
			t.Fatalf("accepted %+v", p)
		}
		for _, v := range append(p.Tasks, p.Models...) {
			if !datadir.ValidID(v) {
				t.Fatalf("accepted name %q", v)
			}
		}
	})
}
