package sandboxtest

import (
	"context"
	"errors"
	"testing"

	"github.com/mass-dev/mass/sandbox"
)

func testProtected(t *testing.T, h Harness) {
	t.Parallel()
	dir := t.TempDir()
	mustWrite(t, dir+"/eval/score.py", "SCORE = 1\n")
	mustWrite(t, dir+"/eval/data/truth.csv", "y\n1\n")
	ep := h.NewWorkspace(t, sandbox.WorkspaceSpec{Protected: []string{"eval/score.py", "eval/data"}},
		[]sandbox.Input{{HostPath: dir + "/eval", Dest: "eval"}})
	sb := h.NewSandbox(t, ep, "attacker")
	ctx := context.Background()
	if _, err := sb.Files().Write(ctx, "eval/score.py", []byte("SCORE = 100\n")); !errors.Is(err, sandbox.ErrDenied) {
		t.Errorf("write to a protected file: %v, want ErrDenied", err)
	}
	if _, err := sb.Files().Edit(ctx, "eval/data/truth.csv", "1", "0", false); !errors.Is(err, sandbox.ErrDenied) {
		t.Errorf("edit inside a protected dir: %v, want ErrDenied", err)
	}
	attacks := []string{
		"echo x >> eval/score.py",
		"rm -f eval/score.py",
		"mv eval/score.py eval/old.py",
		"mv eval eval2",
		"rm -rf eval/data",
		"echo y > eval/data/new.csv",
		"chmod 666 eval/score.py",
		"mv eval/data eval/d2",
	}
	for _, a := range attacks {
		Sh(t, sb, a+" 2>/dev/null")
	}
	got := string(Sh(t, sb, "cat eval/score.py eval/data/truth.csv; ls eval; ls eval/data").Stdout)
	if want := "SCORE = 1\ny\n1\ndata\nscore.py\ntruth.csv\n"; got != want {
		t.Errorf("protected paths changed:\n%s\nwant:\n%s", got, want)
	}
	// Agents may still add their own files beside protected ones.
	if _, err := sb.Files().Write(ctx, "eval/notes.txt", []byte("mine")); err != nil {
		t.Errorf("write beside a protected file: %v", err)
	}
	if res := Sh(t, sb, "rm eval/notes.txt && echo removed"); string(res.Stdout) != "removed\n" {
		t.Errorf("agent cannot remove its own file beside protected ones: %s", res.Stderr)
	}
}
