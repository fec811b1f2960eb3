package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/mass-dev/mass/daemon/api"
)

// A second row with the same key is a conflict, recognised by SQLite's
// result code, for tasks and jobs alike.
func TestDuplicateIsConflict(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "massd.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	task := api.Task{ID: "t1", Created: time.Now(), Dir: "/x"}
	if err := s.CreateTask(ctx, task); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTask(ctx, task); !errors.Is(err, api.ErrConflict) {
		t.Errorf("second CreateTask = %v, want a conflict", err)
	}
	job := api.Job{ID: "j1", Kind: "wait", State: api.StateQueued, Attempt: 1, Created: time.Now()}
	if err := s.CreateJob(ctx, job, EventInput{Type: "queued"}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateJob(ctx, job, EventInput{Type: "queued"}); !errors.Is(err, api.ErrConflict) {
		t.Errorf("second CreateJob = %v, want a conflict", err)
	}
	if isDuplicate(errors.New("UNIQUE constraint failed: tasks.id")) {
		t.Error("isDuplicate matched a message, not a result code")
	}
}
