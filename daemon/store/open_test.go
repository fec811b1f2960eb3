package store

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/taskspec"
)

// TestOpenOddPaths checks that characters with a meaning in a file: URI
// reach the file system unchanged: the database is created at exactly the
// path given, and nothing is created beside it.
func TestOpenOddPaths(t *testing.T) {
	for _, tc := range []struct {
		name     string
		dir      string
		relative bool
	}{
		{name: "query fragment percent", dir: "a?b#c%20d"},
		{name: "uri parameter", dir: "m?mode=memory"},
		{name: "encoded slash", dir: "x%2Fy"},
		{name: "spaces and colon", dir: "with space:and colon"},
		{name: "relative", dir: "rel?a#b%c", relative: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, tc.dir)
			if err := os.Mkdir(dir, 0o750); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "massd.db")
			if tc.relative {
				t.Chdir(root)
				path = filepath.Join(tc.dir, "massd.db")
			}
			ctx := context.Background()
			s, err := Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			task := api.Task{ID: "t1", Created: time.Now(), Dir: dir, Spec: taskspec.Spec{ID: "t1", Prompt: "p"}}
			if err := s.CreateTask(ctx, task); err != nil {
				s.Close()
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}

			if fi, err := os.Stat(filepath.Join(dir, "massd.db")); err != nil {
				t.Fatalf("database file: %v", err)
			} else if fi.Size() == 0 {
				t.Errorf("database file %s is empty", fi.Name())
			}
			if got, want := entries(t, root), []string{tc.dir}; !slices.Equal(got, want) {
				t.Errorf("entries of the parent = %q, want %q", got, want)
			}

			s2 := open(t, path)
			got, err := s2.Task(ctx, "t1")
			if err != nil {
				t.Fatalf("reopen: %v", err)
			}
			if got, want := got.Dir, dir; got != want {
				t.Errorf("task dir = %q, want %q", got, want)
			}
			v, err := s2.SchemaVersion(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := v, len(migrations)-1; got != want {
				t.Errorf("schema version = %d, want %d", got, want)
			}
			// The connection parameters still reach the driver.
			var mode string
			var fk int
			if err := s2.db.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil {
				t.Fatal(err)
			}
			if err := s2.db.QueryRowContext(ctx, `PRAGMA foreign_keys`).Scan(&fk); err != nil {
				t.Fatal(err)
			}
			if mode != "wal" || fk != 1 {
				t.Errorf("journal_mode = %q, foreign_keys = %d; want wal, 1", mode, fk)
			}
		})
	}
}

func entries(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	return names
}
