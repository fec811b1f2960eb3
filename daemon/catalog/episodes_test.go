package catalog

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/store"
	"github.com/mass-dev/mass/datadir"
)

// TestRemoveEpisode removes a finished episode (row and folder), refuses
// one whose job still runs, and sweeps a folder a crash left set aside.
func TestRemoveEpisode(t *testing.T) {
	ctx := context.Background()
	l := datadir.New(t.TempDir())
	st, err := store.Open(ctx, filepath.Join(l.Root, "massd.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c := New(st, l, nil)
	now := time.Now()
	if err := st.CreateJob(ctx, api.Job{ID: "j1", Kind: "episode", State: api.StateRunning, Attempt: 1, Created: now}, store.EventInput{Type: "queued"}); err != nil {
		t.Fatal(err)
	}
	for _, e := range []api.Episode{{ID: "e-run", JobID: "j1", Status: "running"}, {ID: "e-done", JobID: "j1", Status: "completed"}} {
		if err := os.MkdirAll(l.Episode(e.ID), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(l.Episode(e.ID), "ledger.jsonl"), []byte("{}\n"), 0o640); err != nil {
			t.Fatal(err)
		}
		if err := st.UpsertEpisode(ctx, e, now); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.RemoveEpisode(ctx, "e-run"); !errors.Is(err, api.ErrConflict) {
		t.Errorf("remove running episode: %v, want conflict", err)
	}
	if _, err := os.Stat(l.Episode("e-run")); err != nil {
		t.Errorf("refused removal touched the folder: %v", err)
	}
	if _, err := c.RemoveEpisode(ctx, "e-done"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Episode(ctx, "e-done"); !errors.Is(err, api.ErrNotFound) {
		t.Errorf("row after remove: %v", err)
	}
	if _, err := c.RemoveEpisode(ctx, "../x"); !errors.Is(err, api.ErrInvalid) {
		t.Errorf("remove ../x: %v, want invalid", err)
	}
	aside := filepath.Join(l.Episodes(), removingPrefix+"e-old-0011")
	if err := os.MkdirAll(aside, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := c.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(l.Episodes())
	if len(ents) != 1 || ents[0].Name() != "e-run" {
		t.Errorf("episodes/ after remove and sweep: %v, want only e-run", ents)
	}
}
