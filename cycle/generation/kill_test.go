package generation

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const helperEnv = "MASS_GENERATION_HELPER_ROOT"

func killWorld(root string) *world {
	return &world{root: root, failEvery: map[string]int64{"beta": 2}, invalid: 0.1}
}

// TestHelperProcess is the generation the kill tests run in a child and
// kill -9; it does nothing in a normal test run.
func TestHelperProcess(t *testing.T) {
	root := os.Getenv(helperEnv)
	if root == "" {
		t.Skip("only run as the child of a kill test")
	}
	w := killWorld(root)
	w.delay, w.trainFor = 20*time.Millisecond, time.Minute
	_, err := Run(context.Background(), w.config("alpha", "beta"))
	t.Fatalf("the helper should have been killed, it ended: %v", err)
}

func TestKillDuringCollect(t *testing.T) { killAndResume(t, "episode", 5) }
func TestKillDuringRank(t *testing.T)    { killAndResume(t, "judge", 5) }
func TestKillDuringTrain(t *testing.T)   { killAndResume(t, "train", 0) }

// killAndResume runs the generation in a child process, kills it with
// SIGKILL once the log shows more than `after` finished calls of kind (or
// any start, for train), then resumes it here and checks that nothing the
// child had recorded as finished ran again.
func killAndResume(t *testing.T, kind string, after int) {
	root := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"="+root)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := killWorld(root)
	waitFor(t, func() bool {
		if kind == "train" {
			return count(w.calls(), "train start") > 0
		}
		n := 0
		for _, l := range w.calls() {
			if strings.HasPrefix(l, kind) && strings.Contains(l, " finish") {
				n++
			}
		}
		return n > after
	})
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	cfg := w.config("alpha", "beta")
	doneBefore, running := finishedSlots(t, cfg.Dir)
	mark := len(w.calls())
	sum, err := Run(context.Background(), cfg)
	if err != nil || sum.Status != StatusDone {
		t.Fatalf("resumed generation: %v (status %s)", err, sum.Status)
	}
	later := w.calls()[mark:]
	for _, l := range later {
		f := strings.Fields(l)
		if (f[0] == "episode" || f[0] == "judge") && f[4] == "start" && doneBefore[f[0]+" "+f[1]+" "+f[2]] {
			t.Errorf("finished before the kill, run again: %s", l)
		}
	}
	for _, id := range running {
		if !strings.Contains(id, "|") && count(later, "close "+id) != 1 {
			t.Errorf("interrupted episode %s was not closed once", id)
		}
	}
	checkRetried(t, cfg.Dir, running)
	doneAfter, stillRunning := finishedSlots(t, cfg.Dir)
	if len(stillRunning) > 0 || len(doneAfter) < len(doneBefore) {
		t.Errorf("after resume: %d running, %d finished (before %d)", len(stillRunning), len(doneAfter), len(doneBefore))
	}
	if kind == "train" && count(w.calls(), "train start") != 2 {
		t.Errorf("train started %d times, want the killed run and one resumed run", count(w.calls(), "train start"))
	}
	t.Logf("kill during %s: %d slots finished before, %d interrupted attempts, %d calls after resume", kind, len(doneBefore), len(running), len(later))
}

// checkRetried: a slot whose attempt was cut off finished as a later
// attempt of the same slot, the cut-off one marked interrupted.
func checkRetried(t *testing.T, dir string, running []string) {
	t.Helper()
	cut := map[string]bool{}
	for _, id := range running {
		cut[id] = true
	}
	for _, sub := range []string{CollectDir + "/*/episodes.json", RankDir + "/*/judgments.json"} {
		paths, _ := filepath.Glob(filepath.Join(dir, sub))
		for _, p := range paths {
			b, err := openBook[struct{}](p)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range b.slots() {
				for i, a := range s.Attempts {
					if cut[a.ID] && (a.Status != AttemptInterrupted || i == len(s.Attempts)-1 || s.Attempts[len(s.Attempts)-1].N != len(s.Attempts)) {
						t.Errorf("slot %s: cut-off attempt %d not retried as a later attempt: %+v", s.Name, a.N, s.Attempts)
					}
				}
			}
		}
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("the child never reached the kill point")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// finishedSlots reads every slot book of the generation: the finished
// slots ("episode task slot" / "judge task key") and the episode ids of
// attempts left running.
func finishedSlots(t *testing.T, dir string) (map[string]bool, []string) {
	t.Helper()
	done := map[string]bool{}
	var running []string
	read := func(kind, sub, file string, note func(Slot[struct{}], string)) {
		paths, _ := filepath.Glob(filepath.Join(dir, sub, "*", file))
		for _, p := range paths {
			b, err := openBook[struct{}](p)
			if err != nil {
				t.Fatal(err)
			}
			task := filepath.Base(filepath.Dir(p))
			for _, s := range b.slots() {
				note(s, fmt.Sprintf("%s %s %s", kind, task, s.Name))
			}
		}
	}
	note := func(s Slot[struct{}], key string) {
		for _, a := range s.Attempts {
			switch a.Status {
			case AttemptFinished:
				done[key] = true
			case AttemptRunning:
				running = append(running, a.ID)
			}
		}
	}
	read("episode", CollectDir, "episodes.json", note)
	read("judge", RankDir, "judgments.json", note)
	return done, running
}
