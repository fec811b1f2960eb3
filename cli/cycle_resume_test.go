package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mass-dev/mass/cycle/generation"
	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/client"
	"github.com/mass-dev/mass/jobkind"
)

// flakyCycleKind is a cycle kind whose first attempt fails in its train
// stage and whose later attempts finish, as a resumed cycle does.
func flakyCycleKind() jobkind.Kind {
	return jobkind.Kind{Name: generation.CycleKindName, Run: func(ctx context.Context, job jobkind.Job, rep jobkind.Reporter) error {
		rep.Progress(jobkind.Progress{Stage: "train", Message: fmt.Sprintf("attempt %d", job.Attempt)})
		if job.Attempt == 1 {
			return errors.New("generation 1: stage train: mass-train: exit status 1")
		}
		return nil
	}}
}

// TestCycleRunResume: `cycle run --resume` queues the newest stopped cycle
// job again and follows it to its end; without one it exits 3, and beside
// --tasks it is a usage error.
func TestCycleRunResume(t *testing.T) {
	sock := startDaemon(t, flakyCycleKind()).Socket
	if _, err := run(t, "--socket", sock, "cycle", "run", "--resume"); ExitCode(err) != ExitNotFound {
		t.Errorf("resume with no stopped cycle: exit %d (%v), want %d", ExitCode(err), err, ExitNotFound)
	}
	out, err := run(t, "--socket", sock, "cycle", "run", "--tasks", "t1", "--detach")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	id := strings.TrimSpace(out)
	cl := client.New(sock)
	for {
		j, err := cl.Job(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if j.State == api.StateFailed {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := run(t, "--socket", sock, "cycle", "run", "--resume", "--tasks", "t1"); ExitCode(err) != ExitUsage {
		t.Errorf("--resume with --tasks: exit %d (%v), want %d", ExitCode(err), err, ExitUsage)
	}
	out, err = run(t, "--socket", sock, "cycle", "run", "--resume")
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, out)
	}
	for _, want := range []string{"cycle job " + id + " queued again, attempt 2", "job " + id + " succeeded"} {
		if !strings.Contains(out, want) {
			t.Errorf("resume output lacks %q:\n%s", want, out)
		}
	}
	if _, err := run(t, "--socket", sock, "cycle", "run", "--resume", id); err == nil {
		t.Errorf("resuming a succeeded cycle job was accepted")
	}
}
