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
