package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mass-dev/mass/daemon"
	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/client"
	"github.com/mass-dev/mass/daemon/config"
	"github.com/mass-dev/mass/daemon/daemontest"
	"github.com/mass-dev/mass/daemon/jobs"
	"github.com/mass-dev/mass/jobkind"
)

// run runs massctl in-process and returns its output and error.
func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	app := App("test")
	app.Writer, app.ErrWriter = &out, &out
	err := app.Run(append([]string{"massctl"}, args...))
	return out.String(), err
}

// startDaemon runs massd in-process with the given job kinds on a temporary
// socket and data dir, and waits until it answers.
func startDaemon(t *testing.T, kinds ...jobkind.Kind) *config.Config {
	t.Helper()
	return daemontest.Start(t, daemon.Options{Version: "t", Kinds: kinds}).Config
}

func TestValidateLocal(t *testing.T) {
	examples, _ := filepath.Glob("../examples/tasks/*/task.yaml")
	if len(examples) == 0 {
		t.Fatal("no example tasks under ../examples/tasks")
	}
	out, err := run(t, append([]string{"task", "validate"}, examples...)...)
	if err != nil {
		t.Fatalf("validate examples: %v\n%s", err, out)
	}
	if got, want := strings.Count(out, "ok "), len(examples); got != want {
		t.Errorf("%d ok lines, want %d:\n%s", got, want, out)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("id: t\nprompt: p\nlimits:\n  episode_wall_time: 10m\n  agent_turns: 5\n  cpus: two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = run(t, "task", "validate", bad, "--json")
	if err == nil {
		t.Fatalf("malformed spec passed:\n%s", out)
	}
	var res []validation
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	if len(res) != 1 || res[0].OK || !strings.Contains(res[0].Errors[0], ":6: limits.cpus: must be a number") {
		t.Errorf("result = %+v, want a limits.cpus error on line 6", res)
	}
}

func TestNoDaemonMessage(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "none.sock")
	_, err := run(t, "--socket", sock, "status")
	if !errors.Is(err, client.ErrNoDaemon) {
		t.Fatalf("status without daemon = %v, want ErrNoDaemon", err)
	}
	if msg := Explain(err); !strings.Contains(msg, "massd --socket") {
		t.Errorf("message %q does not say how to start massd", msg)
	}
}

func TestCommandsAgainstDaemon(t *testing.T) {
	sock := startDaemon(t, jobs.WaitKind()).Socket
	out, err := run(t, "--socket", sock, "status", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var h api.Health
	if err := json.Unmarshal([]byte(out), &h); err != nil || h.Status != "ok" {
		t.Fatalf("status --json = %q, %v", out, err)
	}
	if _, err := run(t, "--socket", sock, "task", "add", "../examples/tasks/projectile-sim/task.yaml"); err != nil {
		t.Fatal(err)
	}
	out, err = run(t, "--socket", sock, "task", "list")
	if err != nil || !strings.Contains(out, "projectile-sim") {
		t.Fatalf("task list = %q, %v", out, err)
	}
	out, err = run(t, "--socket", sock, "job", "start", "wait", "--task", "projectile-sim", "--params", `{"seconds":0.2,"interval_ms":50}`)
	if err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSpace(out)
	out, err = run(t, "--socket", sock, "job", "watch", id)
	if err != nil {
		t.Fatalf("watch: %v\n%s", err, out)
	}
	if !strings.Contains(out, "succeeded") || !strings.Contains(out, "tick 4/4") {
		t.Errorf("watch output lacks the final state and counters:\n%s", out)
	}
	out, err = run(t, "--socket", sock, "job", "logs", id, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var evs []api.Event
	if err := json.Unmarshal([]byte(out), &evs); err != nil || len(evs) != 7 {
		t.Errorf("logs --json: %d events, %v", len(evs), err)
	}
	out, err = run(t, "--socket", sock, "job", "list", "--state", "succeeded")
	if err != nil || !strings.Contains(out, id) {
		t.Errorf("job list = %q, %v", out, err)
	}
	if _, err := run(t, "--socket", sock, "job", "cancel", id); !errors.Is(err, api.ErrConflict) {
		t.Errorf("cancel finished job = %v, want ErrConflict", err)
	}
	if _, err := run(t, "--socket", sock, "job", "show", "j-none"); !errors.Is(err, api.ErrNotFound) {
		t.Errorf("show missing job = %v, want ErrNotFound", err)
	}
}
