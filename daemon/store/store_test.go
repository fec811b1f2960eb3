package store

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/taskspec"
)

func open(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestMigrateReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "massd.db")
	s := open(t, path)
	ctx := context.Background()
	if err := s.CreateTask(ctx, api.Task{ID: "t1", Created: time.Now(), Dir: "/x", Spec: taskspec.Spec{ID: "t1", Prompt: "p"}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s2 := open(t, path)
	v, err := s2.SchemaVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := v, len(migrations)-1; got != want {
		t.Errorf("schema version = %d, want %d", got, want)
	}
	task, err := s2.Task(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := task.Spec.Prompt, "p"; got != want {
		t.Errorf("prompt = %q, want %q", got, want)
	}
	if err := s2.CreateTask(ctx, api.Task{ID: "t1", Created: time.Now()}); !errors.Is(err, api.ErrConflict) {
		t.Errorf("duplicate task error = %v, want ErrConflict", err)
	}
	if _, err := s2.Task(ctx, "nope"); !errors.Is(err, api.ErrNotFound) {
		t.Errorf("missing task error = %v, want ErrNotFound", err)
	}
}

func TestEventsConcurrentSeq(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "massd.db"))
	ctx := context.Background()
	if err := s.CreateJob(ctx, api.Job{ID: "j1", Kind: "wait", State: api.StateQueued, Attempt: 1, Created: time.Now()}, EventInput{Type: "queued"}); err != nil {
		t.Fatal(err)
	}
	const workers, each = 8, 25
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if _, err := s.AppendEvent(ctx, "j1", "tick", "", map[string]any{"i": i}, time.Now()); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	evs, err := s.Events(ctx, "j1", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(evs), workers*each+1; got != want { // + queued
		t.Fatalf("got %d events, want %d", got, want)
	}
	for i, ev := range evs {
		if got, want := ev.Seq, int64(i+1); got != want {
			t.Fatalf("event %d has seq %d, want %d", i, got, want)
		}
	}
	tail, err := s.Events(ctx, "j1", 196, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(tail), 5; got != want {
		t.Errorf("events after 195 = %d, want %d", got, want)
	}
}

func TestInterruptAndRequeue(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "massd.db"))
	ctx := context.Background()
	now := time.Now()
	for _, id := range []string{"a", "b"} {
		if err := s.CreateJob(ctx, api.Job{ID: id, Kind: "wait", State: api.StateQueued, Attempt: 1, Created: now}, EventInput{Type: "queued"}); err != nil {
			t.Fatal(err)
		}
	}
	if ok, err := s.Claim(ctx, "a", now, EventInput{Type: "started"}); !ok || err != nil {
		t.Fatalf("claim = %v, %v", ok, err)
	}
	if ok, _ := s.Claim(ctx, "a", now, EventInput{Type: "started"}); ok {
		t.Fatal("claimed a running job twice")
	}
	got, err := s.InterruptRunning(ctx, now, "daemon stopped")
	if err != nil || len(got) != 1 || got[0].ID != "a" {
		t.Fatalf("InterruptRunning = %v, %v; want [a]", got, err)
	}
	pending, err := s.PendingRecovery(ctx)
	if err != nil || len(pending) != 1 {
		t.Fatalf("PendingRecovery = %v, %v", pending, err)
	}
	attempt, err := s.Requeue(ctx, "a", now, EventInput{Type: "requeued"})
	if err != nil {
		t.Fatal(err)
	}
	if attempt != 2 {
		t.Errorf("attempt = %d, want 2", attempt)
	}
	counts, err := s.CountByState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := counts[api.StateQueued], 2; got != want {
		t.Errorf("queued = %d, want %d", got, want)
	}
	if ok, err := s.CancelQueued(ctx, "b", now, EventInput{Type: "cancelled"}); !ok || err != nil {
		t.Errorf("CancelQueued = %v, %v", ok, err)
	}
	j, err := s.Job(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := j.State, api.StateCancelled; got != want {
		t.Errorf("state = %q, want %q", got, want)
	}
}

func TestEpisodes(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "massd.db"))
	ctx := context.Background()
	e := api.Episode{ID: "ep-1", JobID: "j", TaskID: "t", Status: "running", Dir: "/d"}
	if err := s.UpsertEpisode(ctx, e, time.Now()); err != nil {
		t.Fatal(err)
	}
	e.Status, e.Summary = "completed", []byte(`{"success":true}`)
	if err := s.UpsertEpisode(ctx, e, time.Now()); err != nil {
		t.Fatal(err)
	}
	got, err := s.Episodes(ctx, EpisodeFilter{JobID: "j"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Status != "completed" || string(got[0].Summary) != `{"success":true}` {
		t.Errorf("episodes = %+v", got)
	}
}
