package catalog

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/store"
	"github.com/mass-dev/mass/datadir"
)

const specDoc = "id: up1\nprompt: p\ninputs: [data]\nlimits: {episode_wall_time: 1m, agent_turns: 3}\n"

func writeTask(doc string) func(dir string) error {
	return func(dir string) error {
		if err := os.WriteFile(filepath.Join(dir, "spec.yaml"), []byte(doc), 0o640); err != nil {
			return err
		}
		if err := os.Mkdir(filepath.Join(dir, "data"), 0o750); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, "data", "a.csv"), []byte("a\n1\n"), 0o640)
	}
}

func TestAdd(t *testing.T) {
	ctx := context.Background()
	l := datadir.New(t.TempDir())
	st, err := store.Open(ctx, l.DB())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c := New(st, l, slog.New(slog.DiscardHandler))

	task, err := c.Add(ctx, writeTask(specDoc))
	if err != nil {
		t.Fatal(err)
	}
	if task.ID != "up1" || task.Dir != l.Task("up1") {
		t.Errorf("Add = %s in %s, want up1 in %s", task.ID, task.Dir, l.Task("up1"))
	}
	if got, err := c.Get(ctx, "up1"); err != nil || got.Dir != task.Dir {
		t.Errorf("Get = %+v, %v", got, err)
	}
	if _, err := c.Add(ctx, writeTask(specDoc)); !errors.Is(err, api.ErrConflict) {
		t.Errorf("second Add of up1 = %v, want a conflict", err)
	}
	if _, err := c.Add(ctx, writeTask("id: Bad ID\n")); !errors.Is(err, api.ErrInvalid) {
		t.Errorf("Add of a bad spec = %v, want invalid", err)
	}
	unpackErr := errors.New("upload cut off")
	if _, err := c.Add(ctx, func(string) error { return unpackErr }); !errors.Is(err, unpackErr) {
		t.Errorf("Add with a failing unpack = %v", err)
	}
	ents, _ := os.ReadDir(l.Tasks())
	if len(ents) != 1 || ents[0].Name() != "up1" {
		t.Errorf("tasks dir holds %v, want only up1: failed adds must leave nothing", ents)
	}
	if ts, err := c.List(ctx); err != nil || len(ts) != 1 {
		t.Errorf("List = %d tasks, %v; want 1", len(ts), err)
	}
}
