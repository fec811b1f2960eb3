package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/client"
	"github.com/mass-dev/mass/daemon/jobs"
	"github.com/mass-dev/mass/jobkind"
)

// trainLikeKind reports progress the way the train kind does: a long
// structured message with loss and ETA and raw counter keys.
func trainLikeKind() jobkind.Kind {
	return jobkind.Kind{Name: "trainlike", Description: "progress like a training run",
		Run: func(ctx context.Context, job jobkind.Job, rep jobkind.Reporter) error {
			const steps = 20
			for s := 1; s <= steps; s++ {
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(100 * time.Millisecond):
				}
				msg := fmt.Sprintf("step %d/%d  loss %.4f  lr 0.0002  tok/s 1534  sup_tok %d  ETA %ds", s, steps, 2.5/float64(s), s*6144, steps-s)
				rep.Progress(jobkind.Progress{Stage: "train", Message: msg, Counters: map[string]int64{
					"step": int64(s), "steps": steps, "processed_supervised_tokens": int64(s * 6144)}})
				if s%5 == 0 {
					rep.Event("checkpoint", fmt.Sprintf("checkpoint %d", s), nil)
				}
			}
			return nil
		}}
}

// tmuxWatch runs `massctl job watch id` in a detached 80x24 tmux session
// and returns a function that captures its screen.
func tmuxWatch(t *testing.T, massctl, sock, tmuxSock, session, id string) func() string {
	t.Helper()
	cmd := fmt.Sprintf("%s --socket %s job watch %s; echo EXIT=$?; sleep 120", massctl, sock, id)
	if out, err := exec.Command("tmux", "-S", tmuxSock, "new-session", "-d", "-x", "80", "-y", "24", "-s", session, cmd).CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	return func() string {
		out, err := exec.Command("tmux", "-S", tmuxSock, "capture-pane", "-p", "-J", "-t", session).Output()
		if err != nil {
			t.Fatalf("tmux capture-pane: %v", err)
		}
		return string(out)
	}
}

func waitScreen(t *testing.T, capture func() string, want string) string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		s := capture()
		if strings.Contains(s, want) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("screen never showed %q:\n%s", want, s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestJobWatchTmux drives `massctl job watch` in a real terminal (tmux) of
// 80 columns: the status line never wraps or stacks, keeps loss and ETA,
// and the job's outcome ends the output with the matching exit status.
func TestJobWatchTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("TMUX NOT INSTALLED (scripts/setup-host.sh installs it): job watch terminal test SKIPPED")
	}
	tmp := t.TempDir()
	massctl := filepath.Join(tmp, "massctl")
	if out, err := exec.Command("go", "build", "-o", massctl, "github.com/mass-dev/mass/cmd/massctl").CombinedOutput(); err != nil {
		t.Fatalf("build massctl: %v\n%s", err, out)
	}
	sock := startDaemon(t, jobs.WaitKind(), trainLikeKind()).Socket
	tmuxSock := filepath.Join(tmp, "tmux.sock")
	t.Cleanup(func() { exec.Command("tmux", "-S", tmuxSock, "kill-server").Run() })
	cl := client.New(sock)
	ctx := context.Background()

	j, err := cl.SubmitJob(ctx, api.JobRequest{Kind: "trainlike"})
	if err != nil {
		t.Fatal(err)
	}
	capture := tmuxWatch(t, massctl, sock, tmuxSock, "ok", j.ID)
	mid := waitScreen(t, capture, "loss ")
	screen := waitScreen(t, capture, "EXIT=")
	for _, s := range []string{mid, screen} {
		checkFits(t, s)
	}
	if n := strings.Count(screen, "ETA "); n != 1 {
		t.Errorf("%d status lines on the screen, want 1:\n%s", n, screen)
	}
	for _, want := range []string{"succeeded", "step 20/20", "loss 0.1250", "job " + j.ID + " succeeded after", "EXIT=0"} {
		if !strings.Contains(screen, want) {
			t.Errorf("screen lacks %q:\n%s", want, screen)
		}
	}
	if strings.Contains(screen, "_") && strings.Contains(screen, "sup_tok") {
		t.Errorf("raw counter names on screen:\n%s", screen)
	}

	w, err := cl.SubmitJob(ctx, api.JobRequest{Kind: "wait", Params: []byte(`{"seconds":60,"interval_ms":200}`)})
	if err != nil {
		t.Fatal(err)
	}
	capture = tmuxWatch(t, massctl, sock, tmuxSock, "cancel", w.ID)
	waitScreen(t, capture, "tick 2/300")
	if _, err := cl.CancelJob(ctx, w.ID); err != nil {
		t.Fatal(err)
	}
	screen = waitScreen(t, capture, "EXIT=")
	checkFits(t, screen)
	for _, want := range []string{"job " + w.ID + " cancelled after", "EXIT=5"} {
		if !strings.Contains(screen, want) {
			t.Errorf("cancelled job's screen lacks %q:\n%s", want, screen)
		}
	}
	if os.Getenv("MASS_SHOW_SCREENS") != "" {
		t.Logf("screen:\n%s", screen)
	}
}

// checkFits fails when a line of the screen is wider than 80 columns.
func checkFits(t *testing.T, screen string) {
	t.Helper()
	for _, l := range strings.Split(screen, "\n") {
		if n := utf8.RuneCountInString(l); n > 80 {
			t.Errorf("line of %d columns on an 80-column screen: %q", n, l)
		}
	}
}
