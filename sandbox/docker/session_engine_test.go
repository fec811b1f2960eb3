package docker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/sandboxtest"
)

// servePIDs prints "pid ppid" of each serve helper in the container. The
// pattern is split so the script's own command line does not match.
const servePIDs = `for d in /proc/[0-9]*; do c=$(tr '\0' ' ' < $d/cmdline 2>/dev/null); case "$c" in *"helper"" serve "*) p=${d#/proc/}; echo $p $(cut -d' ' -f4 $d/stat);; esac; done`

func sessionBox(t *testing.T) (*box, sandbox.Sandbox) {
	t.Helper()
	return sessionBoxOn(t, testPolicy())
}

func sessionBoxOn(t *testing.T, pol sandbox.Policy) (*box, sandbox.Sandbox) {
	t.Helper()
	rt := needEngine(t)
	h := sandboxtest.Harness{Runtime: rt, Image: testImage, Policy: pol}
	ep := h.NewWorkspace(t, sandbox.WorkspaceSpec{}, nil)
	sb := h.NewSandbox(t, ep, "sess")
	return sb.(*box), sb
}

func sh(t *testing.T, sb sandbox.Sandbox, script string) string {
	t.Helper()
	res, err := sb.Exec(context.Background(), sandbox.ExecRequest{Argv: []string{"sh", "-c", script}, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("exec %q: %v", script, err)
	}
	return strings.TrimSpace(string(res.Stdout))
}

func TestSessionReuse(t *testing.T) {
	b, sb := sessionBox(t)
	ctx := context.Background()
	f := sb.Files()
	if _, err := f.Write(ctx, "a.txt", []byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		if r, err := f.Read(ctx, "a.txt", 0, 0); err != nil || r.Content != "hello\n" {
			t.Fatalf("read %d: %+v %v", i, r, err)
		}
		if _, err := f.Stat(ctx, "a.txt"); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := b.ops.started.Load(), int64(1); got != want {
		t.Errorf("41 file ops started %d helper sessions, want %d", got, want)
	}
	// The exec'd helper is not an orphan to `orphans`: its in-container
	// parent is outside the pid namespace (ppid 0), not init.
	if got := strings.Fields(sh(t, sb, servePIDs)); len(got) != 2 || got[1] != "0" {
		t.Errorf("serve helper pid/ppid = %q, want one helper with ppid 0", got)
	}
}

// Shell commands, including one that kills its exec wrapper (the runtime
// then sweeps orphans), leave the session alone.
func TestSessionSurvivesShell(t *testing.T) {
	b, sb := sessionBox(t)
	ctx := context.Background()
	f := sb.Files()
	if _, err := f.Write(ctx, "a.txt", []byte("one\n")); err != nil {
		t.Fatal(err)
	}
	sh(t, sb, "echo two >> a.txt")
	if _, err := sb.Exec(ctx, sandbox.ExecRequest{Argv: []string{"sh", "-c", "kill -9 $PPID; sleep 30"}, Timeout: 5 * time.Second}); err != nil {
		t.Fatal(err)
	}
	r, err := f.Read(ctx, "a.txt", 0, 0)
	if err != nil || r.Content != "one\ntwo\n" {
		t.Fatalf("read after shell: %+v %v", r, err)
	}
	if got, want := b.ops.started.Load(), int64(1); got != want {
		t.Errorf("helper sessions started = %d, want %d (orphans killed the session?)", got, want)
	}
}

func killServe(t *testing.T, sb sandbox.Sandbox, sig string) {
	t.Helper()
	pids := sh(t, sb, servePIDs+` | while read p pp; do kill -`+sig+` $p && echo $p; done`)
	if pids == "" {
		t.Fatalf("no serve helper to kill -%s", sig)
	}
}

// The agent may kill the helper at any time: reads are retried on a fresh
// session, a write either happens exactly once or reports an error.
func TestSessionHelperKilled(t *testing.T) {
	b, sb := sessionBox(t)
	ctx := context.Background()
	f := sb.Files()
	if _, err := f.Write(ctx, "a.txt", []byte("a")); err != nil {
		t.Fatal(err)
	}
	killServe(t, sb, "9")
	if r, err := f.Read(ctx, "a.txt", 0, 0); err != nil || r.Content != "a" {
		t.Fatalf("read after the helper was killed: %+v %v", r, err)
	}
	if got, want := b.ops.started.Load(), int64(2); got != want {
		t.Errorf("helper sessions started = %d, want %d", got, want)
	}
	for i := 0; i < 5; i++ {
		if _, err := f.Stat(ctx, "a.txt"); err != nil { // a live session to kill
			t.Fatal(err)
		}
		before := sh(t, sb, "cat a.txt")
		killServe(t, sb, "9")
		_, err := f.Edit(ctx, "a.txt", before, before+"a", false)
		after := sh(t, sb, "cat a.txt")
		switch {
		case err == nil && after != before+"a":
			t.Errorf("edit after kill succeeded but %q became %q, want %q", before, after, before+"a")
		case err != nil && after != before && after != before+"a":
			t.Errorf("edit after kill failed (%v) and %q became %q", err, before, after)
		case err != nil:
			// Allowed by the contract, but the helper died before the op
			// began, so the liveness probe should have replaced it.
			t.Errorf("edit after the helper was killed between ops: %v", err)
		}
	}
	if got, want := sh(t, sb, "cat a.txt"), "aaaaaa"; got != want {
		t.Errorf("after five edits the file is %q, want %q", got, want)
	}
}

// A helper that stops answering hits the per-op timeout; the agent's
// processes are killed and the next op gets a fresh session.
func TestSessionTimeout(t *testing.T) {
	b, sb := sessionBox(t)
	b.opTimeout = 2 * time.Second
	ctx := context.Background()
	f := sb.Files()
	if _, err := f.Stat(ctx, "."); err != nil {
		t.Fatal(err)
	}
	killServe(t, sb, "STOP")
	start := time.Now()
	if _, err := f.Read(ctx, "a.txt", 0, 0); !errors.Is(err, sandbox.ErrTimeout) {
		t.Fatalf("read from a stopped helper: %v, want ErrTimeout", err)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("timed-out read took %s", took)
	}
	if got := sh(t, sb, servePIDs); got != "" {
		t.Errorf("stopped helper survived the timeout: %s", got)
	}
	if _, err := f.Write(ctx, "a.txt", []byte("ok")); err != nil {
		t.Fatalf("write after a timeout: %v", err)
	}
}

// Many goroutines share one box; ops are serialized on one session.
func TestSessionConcurrent(t *testing.T) {
	b, sb := sessionBox(t)
	ctx := context.Background()
	f := sb.Files()
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				name, body := fmt.Sprintf("g%d.txt", g), fmt.Sprintf("goroutine %d op %d\n", g, i)
				if _, err := f.Write(ctx, name, []byte(body)); err != nil {
					t.Errorf("write %s: %v", name, err)
					return
				}
				if r, err := sb.Files().Read(ctx, name, 0, 0); err != nil || r.Content != body {
					t.Errorf("read %s: %q %v, want %q", name, r.Content, err, body)
					return
				}
			}
		}()
	}
	wg.Wait()
	if got, want := b.ops.started.Load(), int64(1); got != want {
		t.Errorf("helper sessions started = %d, want %d", got, want)
	}
}

func TestSessionClosedWithBox(t *testing.T) {
	b, sb := sessionBox(t)
	ctx := context.Background()
	if _, err := sb.Files().Stat(ctx, "."); err != nil {
		t.Fatal(err)
	}
	s := b.ops.cur
	if err := sb.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		t.Error("session still open after Remove")
	}
	if _, err := sb.Files().Stat(ctx, "."); !errors.Is(err, sandbox.ErrNotFound) {
		t.Errorf("stat after Remove: %v, want ErrNotFound", err)
	}
}
