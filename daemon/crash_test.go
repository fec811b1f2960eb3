package daemon_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/client"
	"github.com/mass-dev/mass/sandbox/sandboxtest"
)

var (
	buildOnce sync.Once
	buildErr  error
	buildDir  string
)

func TestMain(m *testing.M) {
	sandboxtest.PinRunc()
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// buildBinaries compiles the real massd and massctl once per test binary
// and returns the directory holding them.
func buildBinaries(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "massd-build-")
		if buildErr != nil {
			return
		}
		cmd := exec.Command("go", "build", "-o", buildDir+"/", "./cmd/massd", "./cmd/massctl")
		cmd.Dir = ".."
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("build massd and massctl: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildDir
}

func buildMassd(t *testing.T) string { return filepath.Join(buildBinaries(t), "massd") }

type proc struct {
	cmd *exec.Cmd
	log string
}

func startMassd(t *testing.T, bin, sock, data string) *proc {
	t.Helper()
	logPath := filepath.Join(filepath.Dir(data), "massd-"+time.Now().Format("150405.000")+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--socket", sock, "--data-dir", data, "--jobs", "2", "--log-level", "debug")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), "MASS_CONFIG=")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	logf.Close()
	p := &proc{cmd: cmd, log: logPath}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("massd log %s:\n%s", logPath, b)
		}
	})
	cl := client.New(sock)
	deadline := time.Now().Add(15 * time.Second)
	for {
		if _, err := cl.Health(context.Background()); err == nil {
			return p
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(logPath)
			t.Fatalf("massd did not come up on %s:\n%s", sock, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func countType(evs []api.Event, typ string) int {
	n := 0
	for _, ev := range evs {
		if ev.Type == typ {
			n++
		}
	}
	return n
}

// TestKillNineAndRestart runs the real massd, kills it with SIGKILL in the
// middle of a job, restarts it and checks the job was interrupted and
// resumed with every earlier event intact and none duplicated.
func TestKillNineAndRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs massd")
	}
	bin := buildMassd(t)
	dir := t.TempDir()
	sock, data := filepath.Join(dir, "massd.sock"), filepath.Join(dir, "data")
	ctx := context.Background()

	p1 := startMassd(t, bin, sock, data)
	cl := client.New(sock)
	task, err := cl.AddTask(ctx, "../examples/tasks/sales-analysis/task.yaml")
	if err != nil {
		t.Fatal(err)
	}
	params, _ := json.Marshal(map[string]any{"seconds": 3, "interval_ms": 100})
	job, err := cl.SubmitJob(ctx, api.JobRequest{Kind: "wait", TaskID: task.ID, Params: params})
	if err != nil {
		t.Fatal(err)
	}
	var before []api.Event
	waitFor(t, "five ticks", func() bool {
		before, err = cl.Events(ctx, job.ID, 0)
		return err == nil && countType(before, "tick") >= 5
	})
	if err := p1.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p1.cmd.Wait()
	if _, err := os.Lstat(sock); err != nil {
		t.Fatalf("expected the dead daemon's socket to remain: %v", err)
	}
	// Whatever the dead daemon managed to write after our snapshot is kept too.
	startMassd(t, bin, sock, data)

	var final api.Job
	waitFor(t, "the job to finish", func() bool {
		final, err = cl.Job(ctx, job.ID)
		return err == nil && api.Terminal(final.State)
	})
	if got, want := final.State, api.StateSucceeded; got != want {
		t.Fatalf("state = %s (%s), want %s", got, final.Error, want)
	}
	if got, want := final.Attempt, 2; got != want {
		t.Errorf("attempt = %d, want %d", got, want)
	}
	after, err := cl.Events(ctx, job.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, ev := range after {
		if got, want := ev.Seq, int64(i+1); got != want {
			t.Fatalf("event %d has seq %d, want %d (gap or duplicate)", i, got, want)
		}
	}
	if len(after) < len(before) {
		t.Fatalf("%d events after restart, fewer than the %d before", len(after), len(before))
	}
	for i := range before {
		if !reflect.DeepEqual(before[i], after[i]) {
			t.Errorf("event %d changed across the crash:\n before %+v\n after  %+v", i+1, before[i], after[i])
		}
	}
	for _, typ := range []string{"interrupted", "requeued", "resumed"} {
		if got, want := countType(after, typ), 1; got != want {
			t.Errorf("%d %q events, want %d", got, typ, want)
		}
	}
	ticks := map[float64]int{}
	for _, ev := range after {
		if ev.Type == "tick" {
			ticks[ev.Fields["tick"].(float64)]++
		}
	}
	for tick, n := range ticks {
		if n != 1 {
			t.Errorf("tick %v recorded %d times", tick, n)
		}
	}
	// A tick may be lost if the kill fell between checkpoint and event,
	// never more than one.
	if got := len(ticks); got < 29 || got > 30 {
		t.Errorf("%d distinct ticks, want 30 (or 29 if the kill split one)", got)
	}
}

// TestGracefulDrain sends SIGTERM during a job: massd exits cleanly, the
// job is recorded interrupted, and the next massd resumes it.
func TestGracefulDrain(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs massd")
	}
	bin := buildMassd(t)
	dir := t.TempDir()
	sock, data := filepath.Join(dir, "massd.sock"), filepath.Join(dir, "data")
	ctx := context.Background()
	p := startMassd(t, bin, sock, data)
	cl := client.New(sock)
	job, err := cl.SubmitJob(ctx, api.JobRequest{Kind: "wait", Params: json.RawMessage(`{"seconds":1,"interval_ms":50}`)})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a tick", func() bool {
		evs, err := cl.Events(ctx, job.ID, 0)
		return err == nil && countType(evs, "tick") >= 2
	})
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("massd exit after SIGTERM: %v", err)
	}
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Errorf("socket still present after a clean exit: %v", err)
	}
	if _, err := cl.Health(ctx); err == nil {
		t.Fatal("massd still answers after SIGTERM")
	}
	startMassd(t, bin, sock, data)
	var final api.Job
	waitFor(t, "the job to finish", func() bool {
		final, err = cl.Job(ctx, job.ID)
		return err == nil && final.State == api.StateSucceeded
	})
	evs, err := cl.Events(ctx, job.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := countType(evs, api.StateInterrupted), 1; got != want {
		t.Errorf("%d interrupted events, want %d", got, want)
	}
	if got, want := final.Attempt, 2; got != want {
		t.Errorf("attempt = %d, want %d", got, want)
	}
}

// TestBinariesStatusAndValidate is the operator's first contact: massd on a
// temporary socket, then massctl status --json and task validate.
func TestBinariesStatusAndValidate(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs massd")
	}
	bin := buildBinaries(t)
	dir := t.TempDir()
	sock := filepath.Join(dir, "massd.sock")
	startMassd(t, filepath.Join(bin, "massd"), sock, filepath.Join(dir, "data"))
	massctl := func(args ...string) (string, error) {
		out, err := exec.Command(filepath.Join(bin, "massctl"), append([]string{"--socket", sock}, args...)...).CombinedOutput()
		return string(out), err
	}
	out, err := massctl("status", "--json")
	if err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	var h api.Health
	if err := json.Unmarshal([]byte(out), &h); err != nil || h.Status != "ok" {
		t.Fatalf("status --json = %q, %v", out, err)
	}
	examples, _ := filepath.Glob("../examples/tasks/*/task.yaml")
	if out, err := massctl(append([]string{"task", "validate"}, examples...)...); err != nil {
		t.Fatalf("validate examples: %v\n%s", err, out)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("id: bad\nprompt: p\nsplit: dev\nlimits: {episode_wall_time: 1m, agent_turns: 3}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = massctl("task", "validate", bad)
	if err == nil || !strings.Contains(out, ":3: split:") {
		t.Errorf("malformed spec: err %v, output %q; want a failure naming split on line 3", err, out)
	}
	out, err = massctl("--socket", filepath.Join(dir, "nobody.sock"), "status")
	if err == nil || !strings.Contains(out, "start it with") {
		t.Errorf("status without a daemon: err %v, output %q", err, out)
	}
}
