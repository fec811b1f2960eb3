package docker

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/mass-dev/mass/sandbox"
)

// pausePIDs prints "pid uid" of each process whose command line is exactly
// the helper's pause (not the init that runs it); the pattern is split so
// the script's own command line does not match.
const pausePIDs = `for d in /proc/[0-9]*; do c=$(tr '\0' ' ' < $d/cmdline 2>/dev/null); case "$c" in "/.mass/mass-sandbox-helper"" pause ") echo ${d#/proc/} $(grep ^Uid: $d/status | cut -f2);; esac; done`

// The container's main processes run under sandbox.MainUID, out of the
// agent's reach, so neither sweep spares a process by name: a `pause` the
// agent starts itself dies like any other of its processes, while the
// container and its real main processes live on.
func TestForgedPauseIsKilled(t *testing.T) {
	b, sb := sessionBox(t)
	ctx := context.Background()
	main := strconv.Itoa(sandbox.MainUID)
	agent, _, _ := sandbox.ParseUser(b.policy.User)
	forge := HelperMount + " pause </dev/null >/dev/null 2>&1 &"
	// detached starts a forged pause outside any exec wrapper: the raw exec's
	// shell exits at once and the pause is reparented to pid 1.
	detached := func(t *testing.T) {
		t.Helper()
		res, err := b.r.execRaw(ctx, b.id, execOpts{argv: []string{"sh", "-c", forge}, user: b.policy.User, maxBytes: 4096})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("start a forged pause: exit %d %s %v", res.ExitCode, res.Stderr, err)
		}
		if got := sh(t, sb, pausePIDs); !strings.Contains(got, " "+strconv.Itoa(agent)) {
			t.Fatalf("forged pause not running: pauses %q", got)
		}
	}
	tests := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"orphans after the wrapper dies", func(t *testing.T) {
			// Exec sees the wrapper killed (status >= 128) and sweeps orphans.
			res, err := sb.Exec(ctx, sandbox.ExecRequest{Argv: []string{"sh", "-c", forge + " kill -9 $PPID"}})
			if err != nil || res.ExitCode < 128 {
				t.Fatalf("exec that kills its wrapper: exit %d %v", res.ExitCode, err)
			}
		}},
		{"orphans", func(t *testing.T) { detached(t); b.killOrphans(ctx) }},
		{"killall", func(t *testing.T) { detached(t); b.killAll(ctx) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.run(t)
			got := strings.Fields(sh(t, sb, pausePIDs))
			if len(got) != 2 || got[1] != main {
				t.Errorf("pauses (pid uid) after the sweep = %q, want only the main one, of uid %s", got, main)
			}
			if got := sh(t, sb, "grep ^Uid: /proc/1/status | cut -f2"); got != main {
				t.Errorf("pid 1 uid = %q, want %s", got, main)
			}
			in, err := b.r.cli.ContainerInspect(ctx, b.id)
			if err != nil || !in.State.Running {
				t.Fatalf("container after the sweep: running %v, err %v", in.State != nil && in.State.Running, err)
			}
			if got := sh(t, sb, "echo alive"); got != "alive" {
				t.Errorf("exec after the sweep: %q", got)
			}
		})
	}
}

// The container's own user is the main process's: an exec that names no
// user would run as it, so execRaw refuses one before asking the engine.
func TestExecNeedsUser(t *testing.T) {
	_, err := (&Runtime{}).execRaw(context.Background(), "c", execOpts{argv: []string{"true"}})
	if !errors.Is(err, sandbox.ErrInvalid) {
		t.Errorf("exec without a user: %v, want ErrInvalid", err)
	}
}
