package docker

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mass-dev/mass/sandbox"
)

// countMarked counts processes whose command line holds F2MARK; the
// pattern is split so the counting script does not match itself.
const countMarked = `n=0; for d in /proc/[0-9]*; do case "$(tr '\0' ' ' < $d/cmdline 2>/dev/null)" in *"F2""MARK"*) n=$((n+1));; esac; done; echo $n`

// TestSweepAfterWrapperQuit reproduces F2: the exec wrapper dies of
// SIGQUIT (a Go program, it exits 2, below the old sweep threshold of
// 128), and the command's background process must not survive the call.
func TestSweepAfterWrapperQuit(t *testing.T) {
	eachRuntime(t, testSweepAfterWrapperQuit)
}

func testSweepAfterWrapperQuit(t *testing.T, pol sandbox.Policy) {
	_, sb := sessionBoxOn(t, pol)
	sh(t, sb, `sh -c 'sleep 1000; : F2MARK' & sh -c 'sleep 1000; : F2MARK' & kill -QUIT $PPID; sleep 5`)
	if n := sh(t, sb, countMarked); n != "0" {
		t.Errorf("%s processes outlived their command (wrapper killed by SIGQUIT)", n)
	}
}

// TestSweepBeatsGuardian reproduces F2's guardian: a detached loop that
// SIGKILLs every new helper process (the old killall/orphans sweeps ran
// as helpers in the box) and keeps writing to the workspace. The host
// freezes the box and kills it; nothing may be left and the file must
// stop growing.
func TestSweepBeatsGuardian(t *testing.T) {
	eachRuntime(t, testSweepBeatsGuardian)
}

func testSweepBeatsGuardian(t *testing.T, pol sandbox.Policy) {
	_, sb := sessionBoxOn(t, pol)
	guard := `while :; do echo x >> /workspace/guard.log; for d in /proc/[0-9]*; do case "$(tr '\0' ' ' < $d/cmdline 2>/dev/null)" in *mass-sandbox-helper*) kill -9 ${d#/proc/} 2>/dev/null;; esac; done; done`
	if _, err := sb.Files().Write(context.Background(), "guard.sh", []byte(guard)); err != nil {
		t.Fatal(err)
	}
	sh(t, sb, `setsid sh guard.sh F2MARK >/dev/null 2>&1 & setsid sh guard.sh F2MARK >/dev/null 2>&1 & sleep 0.5; kill -QUIT $PPID; sleep 5`)
	res, err := sb.Exec(context.Background(), sandbox.ExecRequest{Argv: []string{"sh", "-c", countMarked}, Timeout: 30 * time.Second})
	if err != nil && isNotRunning(err) {
		// On runsc (systrap) the sweep's SIGKILLs can end the whole
		// sandbox: then no guardian outlives it either.
		t.Logf("the sweep ended the box itself (%v): nothing of it runs", err)
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.TrimSpace(string(res.Stdout)); n != "0" {
		t.Errorf("%s guardian processes outlived their command", n)
	}
	a := sh(t, sb, "wc -c < /workspace/guard.log; sleep 0.3")
	b := sh(t, sb, "wc -c < /workspace/guard.log")
	if strings.TrimSpace(a) == "" || a != b {
		t.Errorf("guard.log still grows after the sweep: %q then %q", a, b)
	}
}
