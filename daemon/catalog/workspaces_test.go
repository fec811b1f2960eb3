package catalog

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/store"
	"github.com/mass-dev/mass/datadir"
)

// TestPruneWorkspaces removes the exports of old finished episodes that
// the retention keeps neither by age nor by count, and never a record, a
// log, a running episode's export or what a planted link points to.
func TestPruneWorkspaces(t *testing.T) {
	ctx := context.Background()
	l := datadir.New(t.TempDir())
	st, err := store.Open(ctx, filepath.Join(l.Root, "massd.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c := New(st, l, nil)
	now := time.Now()
	outside := filepath.Join(t.TempDir(), "precious")
	if err := os.WriteFile(outside, []byte("keep"), 0o640); err != nil {
		t.Fatal(err)
	}
	eps := []struct {
		id, status string
		age        time.Duration
	}{
		{"e-new", "completed", time.Hour}, {"e-mid", "failed", 10 * 24 * time.Hour},
		{"e-old", "completed", 40 * 24 * time.Hour}, {"e-older", "completed", 50 * 24 * time.Hour},
		{"e-run", "running", 60 * 24 * time.Hour}, {"e-link", "completed", 70 * 24 * time.Hour},
	}
	for _, e := range eps {
		dir := l.Episode(e.id)
		if err := os.MkdirAll(dir, 0o750); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "ledger.jsonl"), []byte("{}\n"), 0o640)
		if e.id == "e-link" {
			os.Symlink(outside, filepath.Join(dir, "workspace.tar"))
		} else {
			os.WriteFile(filepath.Join(dir, "workspace.tar"), []byte("tar"), 0o640)
		}
		if err := st.UpsertEpisode(ctx, api.Episode{ID: e.id, JobID: "j-gone", Status: e.status}, now.Add(-e.age)); err != nil {
			t.Fatal(err)
		}
	}
	got, err := c.PruneWorkspaces(ctx, Retention{KeepFor: 30 * 24 * time.Hour, KeepLast: 3}, now)
	if err != nil {
		t.Fatal(err)
	}
	// e-old is kept by count (third newest), e-run runs, e-link is a link.
	if want := []string{"e-older"}; !slices.Equal(got, want) {
		t.Errorf("pruned %v, want %v", got, want)
	}
	got, _ = c.PruneWorkspaces(ctx, Retention{KeepFor: 5 * 24 * time.Hour}, now)
	if want := []string{"e-mid", "e-old"}; !slices.Equal(got, want) {
		t.Errorf("pruned %v by age alone, want %v", got, want)
	}
	for _, e := range eps {
		_, err := os.Lstat(filepath.Join(l.Episode(e.id), "workspace.tar"))
		if gone := errors.Is(err, os.ErrNotExist); gone != (e.id == "e-older" || e.id == "e-mid" || e.id == "e-old") {
			t.Errorf("%s: workspace.tar gone = %v", e.id, gone)
		}
		if _, err := st.Episode(ctx, e.id); err != nil {
			t.Errorf("%s: record lost: %v", e.id, err)
		}
		if _, err := os.Stat(filepath.Join(l.Episode(e.id), "ledger.jsonl")); err != nil {
			t.Errorf("%s: ledger lost: %v", e.id, err)
		}
	}
	if b, err := os.ReadFile(outside); err != nil || string(b) != "keep" {
		t.Errorf("the link's target was touched: %q %v", b, err)
	}
	if got, _ := c.PruneWorkspaces(ctx, Retention{}, now); got != nil {
		t.Errorf("an empty retention pruned %v", got)
	}
}
