package server

import (
	"archive/tar"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/store"
	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/taskspec"
)

// TestAddTaskAllOrNothing makes a step of POST /v1/tasks fail after the
// upload has been unpacked and checked, and wants neither a task row nor a
// task folder left behind, and an error that names the task.
func TestAddTaskAllOrNothing(t *testing.T) {
	id := strings.Repeat("t", 64) // the longest id taskspec allows
	spec := strings.Replace(specDoc, "id: up1", "id: "+id, 1)
	tests := []struct {
		name     string
		dataDir  func(t *testing.T) string
		setup    func(t *testing.T, st *store.Store, dataDir string)
		wantCode int
		wantMsg  string
	}{
		{
			// The data dir is so deep that the staging folder fits within
			// PATH_MAX but tasks/<id> does not: the final rename fails with
			// ENAMETOOLONG, which no permission bit would do for root.
			name:     "rename fails",
			dataDir:  func(t *testing.T) string { return deepDir(t, 4100-len("/tasks/")-len(id)) },
			wantCode: 500,
			wantMsg:  "store task " + id,
		},
		{
			// A row for the id whose folder is missing: the folder is moved
			// into place, the insert is refused, and the folder must go.
			name:    "insert fails",
			dataDir: func(t *testing.T) string { return t.TempDir() },
			setup: func(t *testing.T, st *store.Store, dataDir string) {
				task := api.Task{ID: id, Created: time.Now(), Dir: filepath.Join(dataDir, "elsewhere"), Spec: taskspec.Spec{ID: id, Prompt: "old"}}
				if err := st.CreateTask(context.Background(), task); err != nil {
					t.Fatal(err)
				}
			},
			wantCode: 409,
			wantMsg:  "task " + id + " already exists",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "massd.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			dataDir := tt.dataDir(t)
			if tt.setup != nil {
				tt.setup(t, st, dataDir)
			}
			before, err := st.Tasks(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			h := New(Options{Store: st, Layout: datadir.New(dataDir), Version: "test", Logger: slog.New(slog.DiscardHandler)}).Handler()

			body := tarOf(t, entry{name: "spec.yaml", typ: tar.TypeReg, body: spec}, entry{name: "data/a.csv", typ: tar.TypeReg, body: "a,b\n"})
			rec := do(t, h, "POST", "/v1/tasks", body)
			if got, want := rec.Code, tt.wantCode; got != want {
				t.Errorf("code = %d, want %d (%s)", got, want, rec.Body)
			}
			if !strings.Contains(rec.Body.String(), tt.wantMsg) {
				t.Errorf("body %.300q does not contain %q", rec.Body, tt.wantMsg)
			}

			after, err := st.Tasks(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if got, want := len(after), len(before); got != want {
				t.Errorf("tasks in the store: %d after the upload, %d before", got, want)
			}
			for _, task := range after {
				if task.Spec.Prompt != "old" {
					t.Errorf("a row was written for the failed upload: %+v", task.ID)
				}
			}
			if got := listDir(t, filepath.Join(dataDir, "tasks")); len(got) != 0 {
				t.Errorf("tasks folder holds %q after a failed upload, want nothing", got)
			}
		})
	}
}

// deepDir returns a new directory whose path is n bytes long.
func deepDir(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	for len(dir) < n {
		r := n - len(dir) - 1 // bytes left for the next component
		seg := min(r, 200)
		if r-seg == 1 {
			seg-- // leave room for a "/d" after it
		}
		dir = filepath.Join(dir, strings.Repeat("d", seg))
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	if got, want := len(dir), n; got != want {
		t.Fatalf("deep dir is %d bytes, want %d", got, want)
	}
	return dir
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	return names
}
