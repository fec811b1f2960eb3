package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/store"
	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/jobkind"
)

// Issue 31: a job that advances between crashes (a finished episode of it
// or of its sub-jobs, or a stage change) gets its attempt budget back up to
// MaxTotalAttempts; one that makes no progress stops after
// MaxAutoAttempts crashes with the reason. e9e71d1 stopped every job
// after its 3rd crash.
func TestAttemptBudgetByProgress(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	kind := jobkind.Kind{Name: "long", OnInterrupt: jobkind.Resume, StageEvent: "generation_stage", Run: func(ctx context.Context, _ jobkind.Job, _ jobkind.Reporter) error { <-ctx.Done(); return ctx.Err() }}
	m, err := NewManager(Options{Store: e.store, Kinds: []jobkind.Kind{kind}, Layout: datadir.New(e.dir), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	progress := map[string]func(id string, at time.Time){
		"episodes": func(id string, at time.Time) { // a slot of its search sub-job finishes
			ep := api.Episode{ID: fmt.Sprintf("ep-%s-%d", id, at.UnixNano()), JobID: id + "-g1-0", Status: "completed"}
			if err := e.store.UpsertEpisode(ctx, ep, at); err != nil {
				t.Fatal(err)
			}
		},
		"stages": func(id string, at time.Time) { // resumes in collect, goes on to rank
			for _, st := range []string{"collect", "rank"} {
				if _, err := e.store.AppendEvent(ctx, id, "generation_stage", st, nil, at); err != nil {
					t.Fatal(err)
				}
			}
		},
		"none": func(id string, at time.Time) { // only the stage it resumes in
			if _, err := e.store.AppendEvent(ctx, id, "generation_stage", "collect", nil, at); err != nil {
				t.Fatal(err)
			}
		},
	}
	crash := func(id string, advance func(string, time.Time)) api.Job {
		t.Helper()
		start := time.Now()
		if ok, err := e.store.Claim(ctx, id, start, store.EventInput{Type: "started"}); !ok || err != nil {
			t.Fatalf("claim %s: %v %v", id, ok, err)
		}
		advance(id, start)
		if err := m.recover(ctx); err != nil { // the next start after a kill
			t.Fatal(err)
		}
		j, err := e.store.Job(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	for _, name := range []string{"episodes", "stages", "none"} {
		j := api.Job{ID: "job-" + name, Kind: "long", State: api.StateQueued, Attempt: 1, Created: time.Now()}
		if err := e.store.CreateJob(ctx, j, store.EventInput{Type: "queued"}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"episodes", "stages"} {
		id := "job-" + name
		var j api.Job
		for range 5 {
			j = crash(id, progress[name])
		}
		if j.State != api.StateQueued || j.Attempt != 6 {
			t.Errorf("%s: after 5 crashes with progress: %s at attempt %d, want queued at 6", id, j.State, j.Attempt)
		}
		for j.State == api.StateQueued {
			j = crash(id, progress[name])
		}
		if j.Attempt != MaxTotalAttempts {
			t.Errorf("%s: stopped at attempt %d, want the total cap %d", id, j.Attempt, MaxTotalAttempts)
		}
		if ev, _, _ := e.store.LastEvent(ctx, id, "settled"); !strings.Contains(ev.Message, "automatic attempts in all") {
			t.Errorf("%s: settled %q does not name the total cap", id, ev.Message)
		}
	}
	id := "job-none"
	var j api.Job
	for range MaxAutoAttempts {
		if j.State == api.StateInterrupted {
			t.Fatalf("stopped before its %d attempts", MaxAutoAttempts)
		}
		j = crash(id, progress["none"])
	}
	if j.State != api.StateInterrupted || j.Attempt != MaxAutoAttempts {
		t.Fatalf("no progress: %s at attempt %d, want interrupted at %d", j.State, j.Attempt, MaxAutoAttempts)
	}
	ev, ok, _ := e.store.LastEvent(ctx, id, "settled")
	if !ok || !strings.Contains(ev.Message, "3 attempts in a row made no progress") {
		t.Errorf("settled without the reason: %q", ev.Message)
	}
	// An operator's retry gives a fresh budget.
	if _, err := m.Retry(ctx, id); err != nil {
		t.Fatal(err)
	}
	if j = crash(id, progress["none"]); j.State != api.StateQueued {
		t.Errorf("after massctl job retry, the first crash without progress: %s, want queued", j.State)
	}
}
