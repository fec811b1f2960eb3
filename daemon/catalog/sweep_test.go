package catalog

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/store"
	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/taskspec"
)

// TestSweepTasks lays out what a daemon killed mid-upload leaves behind and checks that
// the sweep removes exactly that: recorded tasks, stray files and whatever a symlink
// points at stay.
func TestSweepTasks(t *testing.T) {
	ctx := context.Background()
	dataDir := t.TempDir()
	st, err := store.Open(ctx, filepath.Join(dataDir, "massd.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tasks := filepath.Join(dataDir, "tasks")
	outside := t.TempDir()
	mk := func(p string) {
		t.Helper()
		if err := os.MkdirAll(p, 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "spec.yaml"), []byte("id: x\n"), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	mk(filepath.Join(tasks, "kept"))
	mk(filepath.Join(tasks, "orphan"))
	mk(filepath.Join(tasks, ".incoming-0a1b2c"))
	mk(outside)
	if err := os.Symlink(outside, filepath.Join(tasks, ".incoming-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tasks, "NOTES.txt"), []byte("mine"), 0o640); err != nil {
		t.Fatal(err)
	}
	task := api.Task{ID: "kept", Created: time.Now(), Dir: filepath.Join(tasks, "kept"), Spec: taskspec.Spec{ID: "kept", Prompt: "p"}}
	if err := st.CreateTask(ctx, task); err != nil {
		t.Fatal(err)
	}

	if err := New(st, datadir.New(dataDir), slog.New(slog.DiscardHandler)).Sweep(ctx); err != nil {
		t.Fatalf("sweep: %v", err)
	}
	var left []string
	ents, err := os.ReadDir(tasks)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		left = append(left, e.Name())
	}
	if want := []string{"NOTES.txt", "kept"}; len(left) != 2 || left[0] != want[0] || left[1] != want[1] {
		t.Fatalf("tasks/ holds %v after the sweep, want %v", left, want)
	}
	if _, err := os.Stat(filepath.Join(tasks, "kept", "spec.yaml")); err != nil {
		t.Fatalf("recorded task lost its files: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "spec.yaml")); err != nil {
		t.Fatalf("the sweep followed a symlink out of tasks/: %v", err)
	}
}

// TestSweepTasksNoFolder: a fresh data dir has no tasks/ yet.
func TestSweepTasksNoFolder(t *testing.T) {
	dataDir := t.TempDir()
	st, err := store.Open(context.Background(), filepath.Join(dataDir, "massd.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := New(st, datadir.New(dataDir), slog.New(slog.DiscardHandler)).Sweep(context.Background()); err != nil {
		t.Fatalf("sweep of a data dir without tasks/: %v", err)
	}
}
