package usable

import (
	"errors"
	"strings"
	"testing"

	"github.com/mass-dev/mass/sandbox"
)

func TestJudge(t *testing.T) {
	c := Command{Name: "ls_la", Script: "ls -la /workspace"}
	tests := []struct {
		name string
		res  sandbox.ExecResult
		err  error
		ok   bool
		want string
	}{
		{"exit 0", sandbox.ExecResult{}, nil, true, "exit 0"},
		{"exit 2 with stderr", sandbox.ExecResult{ExitCode: 2, Stderr: []byte("ls: cannot access '/workspace': Invalid argument\n")}, nil, false, "exit 2; stderr: ls: cannot access '/workspace': Invalid argument"},
		{"timed out", sandbox.ExecResult{TimedOut: true}, nil, false, "timed out"},
		{"not run", sandbox.ExecResult{}, errors.New("no such container"), false, "could not run: no such container"},
	}
	for _, tt := range tests {
		r := Judge(c, tt.res, tt.err)
		if r.OK != tt.ok || !strings.Contains(r.Observed, tt.want) || r.Name != "usable_ls_la" {
			t.Errorf("%s: Judge = %+v, want ok %v and observed containing %q", tt.name, r, tt.ok, tt.want)
		}
	}
}

func TestTail(t *testing.T) {
	if got, want := Tail([]byte("  short\n"), 10), "short"; got != want {
		t.Errorf("Tail = %q, want %q", got, want)
	}
	long := strings.Repeat("é", 100) // 2 bytes each: a cut must not split one
	got := Tail([]byte(long), 11)
	if !strings.HasPrefix(got, "…") || strings.ContainsRune(got, '\uFFFD') || len(got) > len("…")+11 {
		t.Errorf("Tail of multibyte text = %q", got)
	}
}

func TestCommandsNamedOnce(t *testing.T) {
	seen := map[string]bool{}
	for _, n := range Names() {
		if seen[n] || strings.ContainsAny(n, " \t\"") {
			t.Errorf("bad or duplicate name %q", n)
		}
		seen[n] = true
	}
	if last := Commands[len(Commands)-1]; last.Name != "rm_rf" {
		t.Errorf("last command is %s, want rm_rf (it cleans up)", last.Name)
	}
}
