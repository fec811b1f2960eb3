// Package sandboxtest is the conformance suite every sandbox.Runtime must
// pass: workspace lifecycle, exec caps and timeouts, file operations,
// protected paths, export, listing, cancellation, orphan reaping and the
// grader's container.
package sandboxtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mass-dev/mass/sandbox"
)

// Harness tells the suite how to reach the runtime under test.
type Harness struct {
	// Runtime is shared by all subtests; the suite does not close it.
	Runtime sandbox.Runtime
	// Image runs agents; it needs a POSIX shell with sh, cat, echo, sleep, id, ps, dd.
	Image string
	// Policy is the policy for agent sandboxes (DefaultPolicy when zero).
	Policy sandbox.Policy
}

var seq atomic.Int64

// Episode returns a fresh episode id for one test.
func Episode(t testing.TB) string {
	return fmt.Sprintf("t%d-%d", time.Now().UnixNano()%1e9, seq.Add(1))
}

func (h Harness) policy() sandbox.Policy {
	if h.Policy.Runtime == "" {
		return sandbox.DefaultPolicy()
	}
	return h.Policy
}

// NewWorkspace creates a workspace (removed at cleanup) and returns its episode id.
func (h Harness) NewWorkspace(t testing.TB, ws sandbox.WorkspaceSpec, inputs []sandbox.Input) string {
	t.Helper()
	if ws.Episode == "" {
		ws.Episode = Episode(t)
	}
	ctx := context.Background()
	if err := h.Runtime.CreateWorkspace(ctx, ws, inputs); err != nil {
		t.Fatalf("CreateWorkspace: %v", err)
	}
	t.Cleanup(func() {
		if err := h.Runtime.RemoveWorkspace(context.Background(), ws.Episode); err != nil {
			t.Errorf("RemoveWorkspace %s: %v", ws.Episode, err)
		}
	})
	return ws.Episode
}

// NewSandbox starts an agent on the episode's workspace.
func (h Harness) NewSandbox(t testing.TB, episode, agent string) sandbox.Sandbox {
	t.Helper()
	sb, err := h.Runtime.Create(context.Background(), sandbox.Spec{Episode: episode, Agent: agent, Image: h.Image, Policy: h.policy()})
	if err != nil {
		t.Fatalf("Create %s/%s: %v", episode, agent, err)
	}
	t.Cleanup(func() { _ = sb.Remove(context.Background()) })
	return sb
}

// Sh runs a shell script and fails the test on an engine error.
func Sh(t testing.TB, sb sandbox.Sandbox, script string) sandbox.ExecResult {
	t.Helper()
	res, err := sb.Exec(context.Background(), sandbox.ExecRequest{Argv: []string{"sh", "-c", script}, Timeout: time.Minute})
	if err != nil {
		t.Fatalf("exec %q: %v", script, err)
	}
	return res
}

func hexsum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// Run runs the whole suite.
func Run(t *testing.T, h Harness) {
	t.Run("Exec", func(t *testing.T) { testExec(t, h) })
	t.Run("Files", func(t *testing.T) { testFiles(t, h) })
	t.Run("Workspace", func(t *testing.T) { testWorkspace(t, h) })
	t.Run("Protected", func(t *testing.T) { testProtected(t, h) })
	t.Run("Lifecycle", func(t *testing.T) { testLifecycle(t, h) })
	t.Run("Invalid", func(t *testing.T) { testInvalid(t, h) })
	t.Run("Policy", func(t *testing.T) { testPolicy(t, h) })
	t.Run("Report", func(t *testing.T) { testReport(t, h) })
	t.Run("Concurrent", func(t *testing.T) { testConcurrent(t, h) })
	t.Run("Grade", func(t *testing.T) { testGrade(t, h) })
}

func testExec(t *testing.T, h Harness) {
	t.Parallel()
	ep := h.NewWorkspace(t, sandbox.WorkspaceSpec{}, nil)
	sb := h.NewSandbox(t, ep, "exec")
	ctx := context.Background()
	uid, _, _ := sandbox.ParseUser(h.policy().User)
	tests := []struct {
		name       string
		req        sandbox.ExecRequest
		wantOut    string
		wantErr    string
		wantCode   int
		wantTrunc  bool
		wantTimout bool
	}{
		{name: "echo", req: sandbox.ExecRequest{Argv: []string{"echo", "hello"}}, wantOut: "hello\n"},
		{name: "uid", req: sandbox.ExecRequest{Argv: []string{"id", "-u"}}, wantOut: fmt.Sprintf("%d\n", uid)},
		{name: "exit code", req: sandbox.ExecRequest{Argv: []string{"sh", "-c", "echo oops >&2; exit 3"}}, wantErr: "oops\n", wantCode: 3},
		{name: "stdin", req: sandbox.ExecRequest{Argv: []string{"cat"}, Stdin: strings.NewReader("from stdin")}, wantOut: "from stdin"},
		{name: "dir", req: sandbox.ExecRequest{Argv: []string{"pwd"}, Dir: "/tmp"}, wantOut: "/tmp\n"},
		{name: "default dir", req: sandbox.ExecRequest{Argv: []string{"pwd"}}, wantOut: "/workspace\n"},
		{name: "missing binary", req: sandbox.ExecRequest{Argv: []string{"/no/such"}}, wantCode: 127},
		{name: "cap", req: sandbox.ExecRequest{Argv: []string{"sh", "-c", "dd if=/dev/zero bs=1024 count=4096 2>/dev/null"}, MaxBytes: 1000},
			wantOut: strings.Repeat("\x00", 1000), wantTrunc: true},
		{name: "timeout kills tree", req: sandbox.ExecRequest{Argv: []string{"sh", "-c", "sleep 300 & setsid sleep 301 & sleep 302"}, Timeout: time.Second},
			wantCode: 124, wantTimout: true},
	}
	for _, tt := range tests {
		res, err := sb.Exec(ctx, tt.req)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got, want := string(res.Stdout), tt.wantOut; tt.wantOut != "" && got != want {
			t.Errorf("%s: stdout %q, want %q", tt.name, trim(got), trim(want))
		}
		if got, want := string(res.Stderr), tt.wantErr; tt.wantErr != "" && got != want {
			t.Errorf("%s: stderr %q, want %q", tt.name, got, want)
		}
		if got, want := res.ExitCode, tt.wantCode; got != want {
			t.Errorf("%s: exit %d, want %d (stderr %q)", tt.name, got, want, res.Stderr)
		}
		if got, want := res.Truncated, tt.wantTrunc; got != want {
			t.Errorf("%s: truncated %v, want %v", tt.name, got, want)
		}
		if got, want := res.TimedOut, tt.wantTimout; got != want {
			t.Errorf("%s: timed out %v, want %v", tt.name, got, want)
		}
	}
	execCleanup(t, ctx, sb)
}

// execCleanup: nothing a command starts outlives it (timeout, killed
// wrapper, cancelled context), and huge output is dropped, not buffered.
func execCleanup(t *testing.T, ctx context.Context, sb sandbox.Sandbox) {
	// Nothing the timed-out command started may survive it.
	res := Sh(t, sb, "ps -o comm,args | grep 'sleep 30[0-3]' | grep -v grep || true")
	if got := strings.TrimSpace(string(res.Stdout)); got != "" {
		t.Errorf("processes survived the timeout:\n%s", got)
	}
	// A background process does not outlive its command, and does not hold the call open.
	if res := Sh(t, sb, "sleep 304 & echo started"); string(res.Stdout) != "started\n" || res.TimedOut {
		t.Errorf("background command: %+v", res)
	}
	// A command that kills the exec wrapper still cannot outlive its timeout.
	res, err := sb.Exec(ctx, sandbox.ExecRequest{Argv: []string{"sh", "-c", "kill -9 $PPID; sleep 305"}, Timeout: time.Second})
	if err != nil {
		t.Errorf("exec that kills its wrapper: %v", err)
	}
	if got := strings.TrimSpace(string(Sh(t, sb, "ps -o args | grep -E 'sleep 30[45]' | grep -v grep || true").Stdout)); got != "" {
		t.Errorf("processes survived their command:\n%s", got)
	}
	// Output far beyond the cap is dropped, not buffered, and the call returns.
	res, err = sb.Exec(ctx, sandbox.ExecRequest{Argv: []string{"sh", "-c", "dd if=/dev/zero bs=1M count=64 2>/dev/null"}, MaxBytes: 10})
	if err != nil || len(res.Stdout) != 10 || !res.Truncated {
		t.Errorf("64 MiB output with a 10-byte cap: %d bytes, truncated %v, err %v", len(res.Stdout), res.Truncated, err)
	}
	if _, err := sb.Exec(ctx, sandbox.ExecRequest{}); !errors.Is(err, sandbox.ErrInvalid) {
		t.Errorf("empty argv: %v, want ErrInvalid", err)
	}
	cctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	if _, err := sb.Exec(cctx, sandbox.ExecRequest{Argv: []string{"sleep", "303"}}); err == nil {
		t.Errorf("exec with a cancelled context returned no error")
	}
	if got := strings.TrimSpace(string(Sh(t, sb, "ps -o args | grep 'sleep 303' | grep -v grep || true").Stdout)); got != "" {
		t.Errorf("cancelled command survived: %s", got)
	}
}

func trim(s string) string {
	if len(s) > 60 {
		return fmt.Sprintf("%s…(%d bytes)", s[:60], len(s))
	}
	return s
}

func testWorkspace(t *testing.T, h Harness) {
	t.Parallel()
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "data", "a.csv"), "x,y\n1,2\n")
	mustWrite(t, filepath.Join(dir, "data", "sub", "b.txt"), "bee\n")
	mustWrite(t, filepath.Join(dir, "eval.py"), "print('ok')\n")
	ep := h.NewWorkspace(t, sandbox.WorkspaceSpec{}, []sandbox.Input{
		{HostPath: filepath.Join(dir, "data"), Dest: "data"},
		{HostPath: filepath.Join(dir, "eval.py"), Dest: "tools/eval.py"},
	})
	a := h.NewSandbox(t, ep, "a")
	b := h.NewSandbox(t, ep, "b")
	ctx := context.Background()
	if got, want := string(Sh(t, a, "cat data/a.csv data/sub/b.txt tools/eval.py").Stdout), "x,y\n1,2\nbee\nprint('ok')\n"; got != want {
		t.Errorf("inputs: %q, want %q", got, want)
	}
	if _, err := a.Files().Write(ctx, "shared/out.txt", []byte("from a")); err != nil {
		t.Fatal(err)
	}
	if got, want := string(Sh(t, b, "cat /workspace/shared/out.txt").Stdout), "from a"; got != want {
		t.Errorf("agent b sees %q, want %q", got, want)
	}
	Sh(t, b, "ln -s /etc/passwd link; mkfifo fifo")
	var buf bytes.Buffer
	m, err := h.Runtime.ExportWorkspace(ctx, ep, &buf, 0)
	if err != nil {
		t.Fatalf("export: %v", err)
	}
	got := map[string]sandbox.FileInfo{}
	for _, fi := range m {
		got[fi.Path] = fi
	}
	checks := []struct{ path, typ, sha string }{
		{"data/a.csv", "file", hexsum([]byte("x,y\n1,2\n"))},
		{"shared/out.txt", "file", hexsum([]byte("from a"))},
		{"tools", "dir", ""},
		{"link", "symlink", ""},
		{"fifo", "other", ""},
	}
	if h.policy().Runtime == sandbox.RuntimeRunsc {
		// gVisor's gofer makes no named pipe on the workspace (mkfifo
		// fails there), so there is none to list.
		checks = checks[:len(checks)-1]
	}
	for _, c := range checks {
		fi, ok := got[c.path]
		if !ok {
			t.Errorf("manifest lacks %s (have %d entries)", c.path, len(m))
			continue
		}
		if fi.Type != c.typ || fi.SHA256 != c.sha {
			t.Errorf("manifest %s = %+v, want type %s sha %s", c.path, fi, c.typ, c.sha)
		}
	}
	if buf.Len() == 0 {
		t.Errorf("export wrote no tar")
	}
	if _, err := h.Runtime.ExportWorkspace(ctx, ep, &bytes.Buffer{}, 5); !errors.Is(err, sandbox.ErrTooLarge) {
		t.Errorf("export over the cap: %v, want ErrTooLarge", err)
	}
}

func mustWrite(t testing.TB, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}
