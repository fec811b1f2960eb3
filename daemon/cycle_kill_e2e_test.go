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
	"github.com/mass-dev/mass/cycle/generation"
	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/client"
)

// progressed reports whether the attempt of job id now running (its
// number, 0 before any) made progress as the attempt budget counts it: an
// episode of the job or of its searches started in the attempt reached its
// own end, or the generation left a stage for the next.
func progressed(t *testing.T, cl *client.Client, id string) (attempt int, made bool, why string) {
	t.Helper()
	ctx := context.Background()
	evs, err := cl.Events(ctx, id, 0)
	if err != nil {
		return 0, false, ""
	}
	var since time.Time
	stages := 0
	for _, e := range evs {
		switch e.Type {
		case "started":
			attempt, since, stages = attempt+1, e.Time, 0
		case generation.StageEvent:
			stages++
		}
	}
	if attempt == 0 {
		return 0, false, ""
	}
	if stages > 1 {
		return attempt, true, fmt.Sprintf("%d stages entered", stages)
	}
	eps, err := cl.Episodes(ctx, client.EpisodeFilter{})
	if err != nil {
		return attempt, false, ""
	}
	for _, e := range eps {
		mine := e.JobID == id || strings.HasPrefix(e.JobID, id+"-")
		if mine && !e.Created.Before(since) && e.Status != api.StateRunning && e.Status != "interrupted" {
			return attempt, true, "episode " + e.ID + " " + e.Status
		}
	}
	return attempt, false, ""
}

// Issue 31, attempt policy by progress, through the massd binary: a cycle
// at tiny sizes killed (SIGKILL) right after each of its first three
// attempts starts stops, interrupted, with the reason; another killed five
// times, each time after it made progress (an episode finished, a stage
// left), finishes without an operator, and no episode row is left running. On e9e71d1 the second
// stopped after its 3rd crash. On 009d257, under load, the first's last
// event was episode_interrupted: a kill that came once an episode had
// started left it to start-up recovery, which closes it after the job's
// verdict; the test now asserts that order as the daemon promises it.
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
		out, err := r.massctl("cycle", "run", "--detach", "--tasks", "sales-analysis", "--model", "base", "--generations", "1", "--search-iterations", "1",
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
			a, _, _ := progressed(t, r.cl, stuck)
			return a == kill
		})
		r.stop(true)
		if _, made, why := progressed(t, r.cl, stuck); made {
			t.Fatalf("kill %d came after progress (%s); the test proves nothing", kill, why)
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
	// The verdict is written at start, before the API answers; the
	// episodes the last kill cut off are closed afterwards, by start-up
	// recovery in the background, each with an episode_interrupted event
	// on the job. So what is promised: the job's last verdict is settled,
	// with the reason, only episode_interrupted events follow it, and
	// once recovery ends no episode of the job is left running.
	waitUntil(t, "the stuck cycle's cut-off episodes closed", 2*time.Minute, func() bool {
		eps, err := r.cl.Episodes(context.Background(), client.EpisodeFilter{Status: api.StateRunning})
		if err != nil {
			return false
		}
		for _, e := range eps {
			if e.JobID == stuck || strings.HasPrefix(e.JobID, stuck+"-") {
				return false
			}
		}
		return true
	})
	evs, _ := r.cl.Events(context.Background(), stuck, 0)
	verdict := len(evs) - 1
	for verdict > 0 && evs[verdict].Type == "episode_interrupted" {
		verdict--
	}
	if v := evs[verdict]; v.Type != "settled" || !strings.Contains(v.Message, "3 attempts in a row made no progress") {
		t.Fatalf("stuck cycle's last verdict is %s %q (then %d episode_interrupted), want settled with the reason", v.Type, v.Message, len(evs)-1-verdict)
	}
	t.Logf("stuck cycle settled; %d cut-off episodes closed after the verdict", len(evs)-1-verdict)

	// Progress: killed five times, each after a stage change in the attempt.
	id := cycle()
	for kill := 1; kill <= 5; kill++ {
		var why string
		waitUntil(t, fmt.Sprintf("attempt %d made progress", kill), 5*time.Minute, func() bool {
			a, made, w := progressed(t, r.cl, id)
			why = w
			return a == kill && made
		})
		r.stop(true)
		t.Logf("kill %d after %s", kill, why)
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
