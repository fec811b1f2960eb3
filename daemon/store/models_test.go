package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/mass-dev/mass/daemon/api"
)

func TestModelsSurviveReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "massd.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	m := Model{Name: "gen-1", G: 1, Parent: "base", Weights: "/d/generations/1/export/merged", Tokenizer: "/m/tokenizer.json",
		Adapter: "/d/generations/1/export/adapter", JobID: "job-1", Created: time.Unix(100, 0)}
	if err := s.PutModel(ctx, m); err != nil {
		t.Fatal(err)
	}
	if err := s.PutModel(ctx, m); err != nil {
		t.Errorf("the same job registering again: %v", err)
	}
	other := m
	other.JobID = "job-2"
	if err := s.PutModel(ctx, other); !errors.Is(err, api.ErrConflict) {
		t.Errorf("another job taking gen-1: %v", err)
	}
	s.Close()
	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v, _ := s.SchemaVersion(ctx); v != 2 {
		t.Errorf("schema version %d", v)
	}
	got, err := s.GetModel(ctx, "gen-1")
	if err != nil || got.G != 1 || got.Parent != "base" || got.Weights != m.Weights || !got.Created.Equal(m.Created) {
		t.Fatalf("after reopen: %+v %v", got, err)
	}
	list, err := s.Models(ctx)
	if err != nil || len(list) != 1 {
		t.Fatalf("list %v %v", list, err)
	}
	if _, err := s.GetModel(ctx, "gen-9"); !errors.Is(err, api.ErrNotFound) {
		t.Errorf("missing model: %v", err)
	}
}

// TestRemoveModels: a removed generation's models are unregistered (only
// that job's, of that generation) and its name can be registered again by
// another job.
func TestRemoveModels(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "massd.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, m := range []Model{{Name: "gen-1", G: 1, JobID: "job-1"}, {Name: "gen-2", G: 2, JobID: "job-1"}, {Name: "other-1", G: 1, JobID: "job-9"}} {
		if err := s.PutModel(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	names, err := s.RemoveModels(ctx, "job-1", 1)
	if err != nil || len(names) != 1 || names[0] != "gen-1" {
		t.Fatalf("RemoveModels = %v, %v", names, err)
	}
	if _, err := s.GetModel(ctx, "gen-1"); !errors.Is(err, api.ErrNotFound) {
		t.Errorf("gen-1 after removal: %v", err)
	}
	if list, _ := s.Models(ctx); len(list) != 2 {
		t.Errorf("left %+v, want gen-2 and other-1", list)
	}
	if err := s.PutModel(ctx, Model{Name: "gen-1", G: 1, JobID: "job-2"}); err != nil {
		t.Errorf("another job registering gen-1 after removal: %v", err)
	}
	if names, err := s.RemoveModels(ctx, "job-7", 1); err != nil || len(names) != 0 {
		t.Errorf("removing none = %v, %v", names, err)
	}
}
