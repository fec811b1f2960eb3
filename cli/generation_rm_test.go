package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mass-dev/mass/cycle/generation"
	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/client"
	"github.com/mass-dev/mass/generationfmt"
	"github.com/mass-dev/mass/jobkind"
)

// flaky is parts whose trainer fails while fail is set and, while hold
// is non-nil, waits for it to close first.
type flaky struct {
	*parts
	fail   atomic.Bool
	hold   chan struct{}
	trains atomic.Int64
}

func (f *flaky) Parts(ctx context.Context, j jobkind.Job, rep jobkind.Reporter, parent string) (generation.Parts, error) {
	ps, err := f.parts.Parts(ctx, j, rep, parent)
	ps.Trainer = f
	return ps, err
}

func (f *flaky) Train(ctx context.Context, r generation.TrainRequest) (generationfmt.Training, error) {
	f.trains.Add(1)
	if f.hold != nil {
		select {
		case <-f.hold:
		case <-ctx.Done():
			return generationfmt.Training{}, ctx.Err()
		}
	}
	if f.fail.Load() {
		return generationfmt.Training{}, errors.New("mass-train: CUDA out of memory")
	}
	return f.parts.Train(ctx, r)
}

var genArgs = []string{"generation", "start", "--tasks", "a", "--episodes", "4", "--min-success", "3", "--cap", "5",
	"--opponents", "2", "--train", "2", "--val", "1", "--json"}

// TestGenerationRemoveAfterFailure: a failed generation 1 refuses the
// next generation from the same parent with an error naming both fixes;
// massctl generation rm 1 removes it whole and the same start then
// succeeds.
func TestGenerationRemoveAfterFailure(t *testing.T) {
	f := &flaky{parts: &parts{root: t.TempDir()}}
	f.fail.Store(true)
	cfg := startDaemon(t, generation.NewKind(f))
	sock := "--socket=" + cfg.Socket
	out, err := run(t, append([]string{sock}, genArgs...)...)
	if err == nil || !strings.Contains(err.Error(), "CUDA out of memory") {
		t.Fatalf("first start should fail in train: %v\n%s", err, out)
	}
	f.fail.Store(false)
	out, err = run(t, append([]string{sock}, genArgs...)...)
	if err == nil || !strings.Contains(err.Error(), "belongs to job") ||
		!strings.Contains(err.Error(), "massctl generation rm 1") || !strings.Contains(err.Error(), "massctl generation retry 1") {
		t.Fatalf("second start on a taken number: %v\n%s", err, out)
	}
	out, err = run(t, sock, "generation", "rm", "1")
	if err != nil || !strings.Contains(out, "removed generation 1") {
		t.Fatalf("generation rm 1: %v\n%s", err, out)
	}
	if ents, _ := os.ReadDir(filepath.Join(cfg.DataDir, "generations")); len(ents) != 0 {
		t.Errorf("left in generations/ after rm: %v", ents)
	}
	if _, err := run(t, sock, "generation", "show", "1"); err == nil {
		t.Error("generation show 1 after rm succeeded")
	}
	out, err = run(t, append([]string{sock}, genArgs...)...)
	if err != nil || !strings.Contains(out, `"status":"done"`) {
		t.Fatalf("start after rm: %v\n%s", err, out)
	}
	if _, err := run(t, sock, "generation", "rm", "9"); err == nil {
		t.Error("rm of a missing generation succeeded")
	}
}

// TestGenerationRetryResumes: generation retry G queues the failed job
// again and it finishes from its last good stage (collect not rerun).
func TestGenerationRetryResumes(t *testing.T) {
	f := &flaky{parts: &parts{root: t.TempDir()}}
	f.fail.Store(true)
	cfg := startDaemon(t, generation.NewKind(f))
	sock := "--socket=" + cfg.Socket
	if out, err := run(t, append([]string{sock}, genArgs...)...); err == nil {
		t.Fatalf("first start should fail:\n%s", out)
	}
	runs := f.n.Load()
	f.fail.Store(false)
	out, err := run(t, sock, "generation", "retry", "1", "--detach")
	if err != nil {
		t.Fatalf("generation retry 1: %v\n%s", err, out)
	}
	j := waitFor(t, cfg.Socket, strings.TrimSpace(out))
	if j.State != api.StateSucceeded {
		t.Fatalf("retried job ended %s: %s", j.State, j.Error)
	}
	if f.n.Load() != runs || f.trains.Load() != 2 {
		t.Errorf("retry ran %d more episodes and trained %d times, want 0 and 2", f.n.Load()-runs, f.trains.Load())
	}
	if out, err := run(t, sock, "generation", "show", "1"); err != nil || !strings.Contains(out, "done") {
		t.Errorf("generation show 1: %v\n%s", err, out)
	}
	if out, err := run(t, sock, "generation", "retry", "1"); err == nil || !strings.Contains(err.Error(), "succeeded") {
		t.Errorf("retry of a done generation: %v\n%s", err, out)
	}
}

// TestGenerationRemoveRefusedWhileRunning: rm of a generation whose job
// runs is refused with a conflict naming the job; the folder stays.
func TestGenerationRemoveRefusedWhileRunning(t *testing.T) {
	f := &flaky{parts: &parts{root: t.TempDir()}, hold: make(chan struct{})}
	cfg := startDaemon(t, generation.NewKind(f))
	sock := "--socket=" + cfg.Socket
	out, err := run(t, append(append([]string{sock}, genArgs[:len(genArgs)-1]...), "--detach")...)
	if err != nil {
		t.Fatalf("start --detach: %v\n%s", err, out)
	}
	id := strings.TrimSpace(out)
	for f.trains.Load() == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	out, err = run(t, sock, "generation", "rm", "1")
	if err == nil || !strings.Contains(err.Error(), "job "+id) || !strings.Contains(err.Error(), "running") ||
		!errors.Is(err, api.ErrConflict) {
		t.Errorf("rm while running: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(cfg.DataDir, "generations", "1", "owner.json")); err != nil {
		t.Errorf("folder touched by a refused rm: %v", err)
	}
	close(f.hold)
	if j := waitFor(t, cfg.Socket, id); j.State != api.StateSucceeded {
		t.Fatalf("job ended %s: %s", j.State, j.Error)
	}
}

func waitFor(t *testing.T, socket, id string) api.Job {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	j, err := waitJob(ctx, client.New(socket), id)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// TestGenerationStartFollows: without --json or --detach, generation start
// follows the job to its end and a failed one exits 5 with its error
// text; generation retry follows the same way to success.
func TestGenerationStartFollows(t *testing.T) {
	f := &flaky{parts: &parts{root: t.TempDir()}}
	f.fail.Store(true)
	cfg := startDaemon(t, generation.NewKind(f))
	sock := "--socket=" + cfg.Socket
	out, err := run(t, append([]string{sock}, genArgs[:len(genArgs)-1]...)...)
	if err == nil || ExitCode(err) != ExitJobFailed || !strings.Contains(err.Error(), "failed") ||
		!strings.Contains(err.Error(), "CUDA out of memory") || !strings.Contains(out, "generation job ") {
		t.Fatalf("followed failing start: exit %d, %v\n%s", ExitCode(err), err, out)
	}
	f.fail.Store(false)
	out, err = run(t, sock, "generation", "retry", "1")
	if err != nil || !strings.Contains(out, "queued again") || !strings.Contains(out, "succeeded") {
		t.Fatalf("followed retry: %v\n%s", err, out)
	}
}

// TestCycleRunFollows: cycle run follows its job to the end by default
// and prints only the id with --detach.
func TestCycleRunFollows(t *testing.T) {
	p := &parts{root: t.TempDir()}
	cfg := startDaemon(t, generation.NewCycleKind(cycleParts{p}))
	sock := "--socket=" + cfg.Socket
	args := []string{sock, "cycle", "run", "--tasks", "a", "--generations", "1", "--episodes", "4", "--min-success", "3", "--cap", "5",
		"--opponents", "2", "--train", "2", "--val", "1"}
	out, err := run(t, args...)
	if err != nil || !strings.Contains(out, "cycle job ") || !strings.Contains(out, "succeeded") {
		t.Fatalf("cycle run: %v\n%s", err, out)
	}
	out, err = run(t, append(args, "--detach", "--seed", "9")...)
	if id := strings.TrimSpace(out); err != nil || strings.Contains(id, " ") || id == "" {
		t.Fatalf("cycle run --detach: %v\n%s", err, out)
	}
	if j := waitFor(t, cfg.Socket, strings.TrimSpace(out)); !api.Terminal(j.State) {
		t.Errorf("detached cycle job %s", j.State)
	}
}
