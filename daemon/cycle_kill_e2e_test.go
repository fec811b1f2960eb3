package daemon_test

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mass-dev/mass/agents/model/scripted"
	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/client"
)

// attemptEvents are the job's events since its latest "started" event
// (the attempt now running) and that attempt's number, 0 before any.
func attemptEvents(t *testing.T, cl *client.Client, id string) ([]api.Event, int) {
	t.Helper()
	evs, err := cl.Events(context.Background(), id, 0)
	if err != nil {
		return nil, 0
	}
	attempt := 0
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Type == "started" {
			for _, e := range evs[:i+1] {
				if e.Type == "started" {
					attempt++
				}
			}
			return evs[i+1:], attempt
		}
	}
	return nil, 0
}

func stageChanges(evs []api.Event) int {
	n := 0
	for _, e := range evs {
		if strings.HasSuffix(e.Type, "_stage") {
			n++
		}
	}
	return max(0, n-1)
}

// Issue 31, attempt policy by progress, through the massd binary: a cycle
// at tiny sizes killed (SIGKILL) right after each of its first three
// attempts starts stops, interrupted, with the reason; another killed five
// times, each time after it finished a stage, finishes without an
// operator, and no episode row is left running. On e9e71d1 the second
// stopped after its 3rd crash.
func TestCycleKilledWithProgressFinishes(t *testing.T) {
	needAgentImage(t)
	_, url := newFakeVLLMWith(t, scripted.Policy)
	tiny := filepath.Join(t.TempDir(), "tiny")
	bin := buildBinaries(t)
	cmd := exec.Command("go", "build", "-o", bin+"/", "./cmd/mass-train")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build mass-train: %v\n%s", err, out)
	}
	if out, err := exec.Command(filepath.Join(bin, "mass-train"), "init-model", "--config", "tiny", "--out", tiny).CombinedOutput(); err != nil {
		t.Fatalf("init tiny model: %v\n%s", err, out)
	}
	r := newRigYAML(t, fmt.Sprintf("models:\n  base:\n    base_url: %s\n    model: base-model\n    weights: %s\n    tokenizer: %s\n    serving:\n      lora: runtime\n", url, tiny, tiny), "mass-agent:latest")
	if out, err := r.massctl("task", "add", "../examples/tasks/sales-analysis/task.yaml"); err != nil {
		t.Fatalf("task add: %v %s", err, out)
	}
	cycle := func() string {
		out, err := r.massctl("cycle", "run", "--tasks", "sales-analysis", "--model", "base", "--generations", "1", "--search-iterations", "1",
			"--episodes", "4", "--min-success", "4", "--cap", "6", "--opponents", "2", "--train", "3", "--val", "1", "--train-steps", "2", "--seed", "5")
		if err != nil {
			t.Fatal(err)
		}
		return string(bytes.TrimSpace(out))
	}

	// No progress: killed as soon as each attempt started.
	stuck := cycle()
	for kill := 1; kill <= 3; kill++ {
		waitUntil(t, fmt.Sprintf("attempt %d of the stuck cycle started", kill), 3*time.Minute, func() bool {
			_, a := attemptEvents(t, r.cl, stuck)
			return a == kill
		})
		r.stop(true)
		if evs, _ := attemptEvents(t, r.cl, stuck); stageChanges(evs) > 0 {
			t.Fatalf("kill %d came after a stage change; the test proves nothing: %+v", kill, evs)
		}
		r.start()
	}
	deadline := time.Now().Add(time.Minute)
	for {
		j, err := r.cl.Job(context.Background(), stuck)
		if err == nil && j.State == api.StateInterrupted {
			break
		}
		if time.Now().After(deadline) {
			r.stop(true)
			evs, _ := r.cl.Events(context.Background(), stuck, 0)
			var b strings.Builder
			for _, e := range evs {
				fmt.Fprintf(&b, "%d %s %s %s %v\n", e.Seq, e.Time.Format("15:04:05.000"), e.Type, e.Message, e.Fields)
			}
			t.Fatalf("the stuck cycle did not settle (%s at attempt %d); its events:\n%s", j.State, j.Attempt, b.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	evs, _ := r.cl.Events(context.Background(), stuck, 0)
	if last := evs[len(evs)-1]; last.Type != "settled" || !strings.Contains(last.Message, "3 attempts in a row made no progress") {
		t.Fatalf("stuck cycle ends with %s %q, want settled with the reason", last.Type, last.Message)
	}

	// Progress: killed five times, each after a stage change in the attempt.
	id := cycle()
	for kill := 1; kill <= 5; kill++ {
		waitUntil(t, fmt.Sprintf("attempt %d finished a stage", kill), 5*time.Minute, func() bool {
			evs, a := attemptEvents(t, r.cl, id)
			return a == kill && stageChanges(evs) > 0
		})
		r.stop(true)
		r.start()
	}
	j := r.waitJob(id, 20*time.Minute)
	if j.State != api.StateSucceeded || j.Attempt != 6 {
		t.Fatalf("cycle after 5 kills with progress: %s at attempt %d: %s", j.State, j.Attempt, j.Error)
	}
	evs, _ = r.cl.Events(context.Background(), id, 0)
	requeued := 0
	for _, e := range evs {
		switch e.Type {
		case "settled":
			t.Errorf("the cycle waited for an operator: %s", e.Message)
		case "requeued":
			requeued++
			if e.Fields["progressed"] != true {
				t.Errorf("requeue without progress: %s", e.Message)
			}
		}
	}
	if requeued != 5 {
		t.Errorf("%d automatic requeues, want 5", requeued)
	}
	running, err := r.cl.Episodes(context.Background(), client.EpisodeFilter{Status: api.StateRunning})
	if err != nil || len(running) != 0 {
		t.Errorf("episode rows still running after the kills: %d (%v)", len(running), err)
	}
}
