package docker

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mass-dev/mass/sandbox"
)

// countBG counts processes whose command line holds BGMARK (split so the
// counting script does not match itself).
const countBG = `n=0; for d in /proc/[0-9]*; do case "$(tr '\0' ' ' < $d/cmdline 2>/dev/null)" in *"BG""MARK"*) n=$((n+1));; esac; done; echo $n`

// A background command and the processes it forks survive the sweep after
// later commands, while what a foreground command leaves behind does not;
// Hold freezes the background tree; a tree whose wrapper is killed loses
// its protection; Remove ends everything.
func TestBackgroundSurvivesSweep(t *testing.T) {
	b, sb := sessionBox(t)
	ctx := context.Background()
	bg := sb.(sandbox.Backgrounder)
	pid, err := bg.Background(ctx, sandbox.ExecRequest{Argv: []string{"sh", "-c",
		`(while :; do echo x >> /workspace/bg.log; sleep 0.05; done; : BGMARK) & sleep 1000; : BGMARK`}})
	if err != nil || pid <= 0 {
		t.Fatalf("background: pid %d, %v", pid, err)
	}
	sh(t, sb, `sh -c 'sleep 1000; : F2MARK' & echo started`)
	if n := sh(t, sb, countMarked); n != "0" {
		t.Errorf("%s foreground leftovers survived the sweep next to a background command", n)
	}
	if n := sh(t, sb, countBG); n != "3" {
		t.Errorf("%s background processes after two later calls, want 3 (wrapper, command, its child)", n)
	}
	release, err := bg.Hold(ctx)
	if err != nil {
		t.Fatal(err)
	}
	in, err := b.r.cli.ContainerInspect(ctx, b.id)
	release(ctx)
	if err != nil || in.State == nil || !in.State.Paused {
		t.Errorf("container not frozen while held: %+v, %v", in.State, err)
	}
	b0 := logSize(t, sb)
	time.Sleep(300 * time.Millisecond)
	if c := logSize(t, sb); c <= b0 {
		t.Errorf("bg.log did not grow after release (%d then %d)", b0, c)
	}
	if _, err := bg.Background(ctx, sandbox.ExecRequest{Argv: []string{"sh", "-c", "sleep 1000; : BGMARK"}}); err != nil {
		t.Fatal(err)
	}
	if err := bg.EndBackground(ctx); err != nil {
		t.Fatal(err)
	}
	if n := sh(t, sb, countBG); n != "0" {
		t.Errorf("%s background processes after EndBackground", n)
	}
	if _, err := bg.Background(ctx, sandbox.ExecRequest{Argv: []string{"sh", "-c", "sleep 1000; : BGMARK"}}); err != nil {
		t.Fatal(err)
	}
	// Killing the wrapper (the command's parent) hands the tree to init:
	// the next sweep ends it.
	sh(t, sb, `for d in /proc/[0-9]*; do case "$(tr '\0' ' ' < $d/cmdline 2>/dev/null)" in *"-timeout 0s"*) kill -9 ${d#/proc/};; esac; done; sleep 0.2`)
	if n := sh(t, sb, countBG); n != "0" {
		t.Errorf("%s background processes survived once their wrapper was killed", n)
	}
}

func logSize(t *testing.T, sb sandbox.Sandbox) int64 {
	t.Helper()
	fi, err := sb.Files().Stat(context.Background(), "bg.log")
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size
}

// A runtime the host sweep cannot see into refuses, starting nothing.
func TestBackgroundRefusedWithoutHostSweep(t *testing.T) {
	b, _ := sessionBox(t)
	saved := b.policy.Runtime
	b.policy.Runtime = "runsc"
	defer func() { b.policy.Runtime = saved }()
	_, err := b.Background(context.Background(), sandbox.ExecRequest{Argv: []string{"sleep", "1"}})
	if err == nil || !strings.Contains(err.Error(), "host sweep") {
		t.Fatalf("background on runsc: %v, want a refusal", err)
	}
}
