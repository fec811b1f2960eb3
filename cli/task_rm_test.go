package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/client"
	"github.com/mass-dev/mass/jobkind"
)

func writeSpec(t *testing.T, dir, id, prompt string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "data", "in.txt"), []byte(prompt), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "task.yaml")
	spec := "id: " + id + "\nprompt: " + prompt + "\ninputs:\n  - path: data\nlimits:\n  episode_wall_time: 10m\n  agent_turns: 5\n"
	if err := os.WriteFile(p, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTaskUpdateRemove(t *testing.T) {
	release := make(chan struct{})
	hold := jobkind.Kind{Name: "hold", NeedsTask: true, Run: func(ctx context.Context, job jobkind.Job, rep jobkind.Reporter) error {
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}}
	cfg := startDaemon(t, hold)
	mc := func(args ...string) (string, error) {
		return run(t, append([]string{"--socket", cfg.Socket}, args...)...)
	}
	spec := writeSpec(t, t.TempDir(), "t-upd", "first version")
	if out, err := mc("task", "add", spec); err != nil {
		t.Fatalf("task add: %v\n%s", err, out)
	}
	cl := client.New(cfg.Socket)
	j, err := cl.SubmitJob(context.Background(), api.JobRequest{Kind: "hold", TaskID: "t-upd"})
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); j.State != api.StateRunning; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("job not running: %+v", j)
		}
		j, _ = cl.Job(context.Background(), j.ID)
	}
	spec2 := writeSpec(t, t.TempDir(), "t-upd", "second version")
	if _, err := mc("task", "update", spec2); !errors.Is(err, api.ErrConflict) || !strings.Contains(err.Error(), j.ID) {
		t.Errorf("update while a job runs = %v, want a conflict naming %s", err, j.ID)
	}
	if _, err := mc("task", "rm", "t-upd", "--force"); !errors.Is(err, api.ErrConflict) {
		t.Errorf("rm --force while a job runs = %v, want a conflict", err)
	}
	close(release)
	for deadline := time.Now().Add(10 * time.Second); !api.Terminal(j.State); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("job never finished")
		}
		j, _ = cl.Job(context.Background(), j.ID)
	}
	if out, err := mc("task", "update", spec2); err != nil || !strings.Contains(out, "updated task t-upd") {
		t.Fatalf("task update: %v\n%s", err, out)
	}
	got, err := cl.Task(context.Background(), "t-upd")
	if err != nil || !strings.Contains(got.Spec.Prompt, "second version") {
		t.Errorf("after update: %+v %v", got.Spec.Prompt, err)
	}
	if b, err := os.ReadFile(filepath.Join(cfg.DataDir, "tasks", "t-upd", "data", "in.txt")); err != nil || string(b) != "second version" {
		t.Errorf("stored input after update = %q, %v", b, err)
	}
	other := writeSpec(t, t.TempDir(), "t-other", "x")
	if _, err := run(t, "--socket", cfg.Socket, "task", "update", other); !errors.Is(err, api.ErrNotFound) {
		t.Errorf("update of an unknown task = %v, want not found", err)
	}
	if _, err := mc("task", "rm", "t-upd"); !errors.Is(err, api.ErrConflict) || !strings.Contains(err.Error(), "--force") {
		t.Errorf("rm of a task a job references = %v, want a conflict saying --force", err)
	}
	if out, err := mc("task", "rm", "t-upd", "--force"); err != nil || !strings.Contains(out, "removed task t-upd") {
		t.Fatalf("task rm --force: %v\n%s", err, out)
	}
	if _, err := cl.Task(context.Background(), "t-upd"); !errors.Is(err, api.ErrNotFound) {
		t.Errorf("task after rm: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(cfg.DataDir, "tasks", "*")); len(left) != 0 {
		t.Errorf("left in tasks/: %v", left)
	}
	if _, err := cl.Job(context.Background(), j.ID); err != nil {
		t.Errorf("the job's record went with the task: %v", err)
	}
}
