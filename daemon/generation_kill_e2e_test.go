package daemon_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mass-dev/mass/agents/model/fakeopenai"
	"github.com/mass-dev/mass/agents/model/scripted"
	"github.com/mass-dev/mass/cycle/search"
	"github.com/mass-dev/mass/generationfmt"
)

// judgeGate is the policy of a fake vLLM that plays the scripted model:
// it counts calls by model name and, once armed, answers the first allow
// evaluator calls and holds the rest until release, so that a test can
// kill massd while judgments are in flight.
type judgeGate struct {
	mu      sync.Mutex
	armed   bool
	allow   int
	passed  int // evaluator calls answered since arming
	held    int // evaluator calls held back
	open    chan struct{}
	byModel map[string]int
}

func newJudgeGate() *judgeGate {
	return &judgeGate{open: make(chan struct{}), byModel: map[string]int{}}
}

func (g *judgeGate) policy(r *fakeopenai.Request) fakeopenai.Reply {
	g.mu.Lock()
	g.byModel[r.Model]++
	if g.armed && strings.Contains(r.FirstUser(), scripted.EvaluatorMarker) {
		if g.passed >= g.allow {
			g.held++
			ch := g.open
			g.mu.Unlock()
			<-ch // the massd that asked is dead by then
			return fakeopenai.Reply{Status: http.StatusServiceUnavailable, Error: "held past a kill"}
		}
		g.passed++
	}
	g.mu.Unlock()
	return scripted.Policy(r)
}

func (g *judgeGate) arm(allow int) {
	g.mu.Lock()
	g.armed, g.allow = true, allow
	g.mu.Unlock()
}

// release answers every later evaluator call and lets the held ones go.
func (g *judgeGate) release() {
	g.mu.Lock()
	g.allow = 1 << 30
	close(g.open)
	g.mu.Unlock()
}

func (g *judgeGate) counts() (passed, held int, byModel map[string]int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	m := map[string]int{}
	for k, v := range g.byModel {
		m[k] = v
	}
	return g.passed, g.held, m
}

// slotFile reads a slot book (episodes.json, judgments.json): slot name →
// attempts, for the slots with a result, and every slot.
func slotFile(t *testing.T, p string) (map[string]int, []e2eSlot) {
	t.Helper()
	b, err := os.ReadFile(p)
	if os.IsNotExist(err) {
		return nil, nil
	}
	var slots []e2eSlot
	if err != nil || json.Unmarshal(b, &slots) != nil {
		return nil, nil // mid-rename: the caller polls again
	}
	done := map[string]int{}
	for _, s := range slots {
		if s.Result != nil {
			done[s.Name] = len(s.Attempts)
		}
	}
	return done, slots
}

func waitUntil(t *testing.T, what string, limit time.Duration, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(limit); !ok(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, limit)
		}
	}
}

// trainChildren lists the pids of processes whose command line names dir.
func trainChildren(dir string) []string {
	var pids []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte(dir)) {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

// TestGenerationKilledDuringRankAndTrain runs a small generation of a
// model served by a fake vLLM (the scripted policy behind the real wire,
// `serving: {lora: runtime}`) through the massd binary, kills massd with
// SIGKILL while judgments are in flight and again while mass-train runs,
// and checks that the generation completes with no finished episode or
// judgment run again (slot files and the fake's call counts agree), that
// the mass-train a killed massd left ended before another started, that
// gen-1's adapter was loaded into the fake under "gen-1", and that the
// next search, asked for gen-1, sends its model calls as "gen-1".
func TestGenerationKilledDuringRankAndTrain(t *testing.T) {
	needAgentImage(t)
	gate := newJudgeGate()
	fake, url := newFakeVLLMWith(t, gate.policy)
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
	task := "../examples/tasks/sales-analysis/task.yaml"
	out, err := r.massctl("search", "--task", task, "--iterations", "3", "--seed", "0", "--model", "base", "--json")
	var ss search.Summary
	if err != nil || json.Unmarshal(out, &ss) != nil || !ss.BeatsReference {
		t.Fatalf("search: %v %s", err, out)
	}
	gate.arm(3)
	out, err = r.massctl("generation", "start", "--tasks", ss.Task, "--model", "base", "--episodes", "6", "--min-success", "6",
		"--cap", "8", "--opponents", "2", "--train", "4", "--val", "1", "--train-steps", "30", "--seed", "3", "--detach")
	if err != nil {
		t.Fatal(err)
	}
	jobID := string(bytes.TrimSpace(out))
	gdir := filepath.Join(r.data, "generations", "1")
	episodes, judgments := filepath.Join(gdir, "collect", ss.Task, "episodes.json"), filepath.Join(gdir, "rank", ss.Task, "judgments.json")

	// Kill 1: three judgments answered, the next ones held in flight.
	waitUntil(t, "three judgments finished and one held", 5*time.Minute, func() bool {
		done, _ := slotFile(t, judgments)
		_, held, _ := gate.counts()
		return len(done) >= 3 && held > 0
	})
	r.stop(true)
	epBefore, _ := slotFile(t, episodes)
	judgedBefore, slots := slotFile(t, judgments)
	passedAtKill, held, _ := gate.counts()
	gate.release()
	r.start()

	// Kill 2: mass-train has written its first steps.
	metrics := filepath.Join(gdir, "train", "metrics.jsonl")
	waitUntil(t, "mass-train stepping", 5*time.Minute, func() bool {
		b, _ := os.ReadFile(metrics)
		_, err := os.Stat(filepath.Join(gdir, generationfmt.TrainFile))
		return bytes.Count(b, []byte("\n")) >= 2 && os.IsNotExist(err)
	})
	judgedRaw, _ := os.ReadFile(judgments)
	passedAtKill2, _, _ := gate.counts()
	r.stop(true)
	left := trainChildren(filepath.Join(gdir, "train"))
	waitUntil(t, "the killed massd's mass-train ends", time.Minute, func() bool { return len(trainChildren(filepath.Join(gdir, "train"))) == 0 })
	r.start()
	j := r.waitJob(jobID, 10*time.Minute)
	if j.State != "succeeded" {
		t.Fatalf("job after two kills: %s %s", j.State, j.Error)
	}
	t.Logf("kill 1: %d of %d judgments finished, %d held in flight; kill 2: mass-train children right after: %v; job attempt %d",
		len(judgedBefore), len(slots), held, left, j.Attempt)

	epAfter, _ := slotFile(t, episodes)
	if fmt.Sprint(epAfter) != fmt.Sprint(epBefore) {
		t.Errorf("episode slots changed after collect finished: %v, then %v", epBefore, epAfter)
	}
	judgedAfter, all := slotFile(t, judgments)
	for name, n := range judgedBefore {
		if judgedAfter[name] != n {
			t.Errorf("judgment %s finished before the kill with %d attempts, has %d after", name, n, judgedAfter[name])
		}
	}
	for _, s := range all {
		if s.Result == nil || s.Attempts[len(s.Attempts)-1].Status != "finished" {
			t.Errorf("judgment %s ended %+v", s.Name, s.Attempts)
		}
	}
	passed, _, _ := gate.counts()
	if got, want := passedAtKill2-passedAtKill, len(all)-len(judgedBefore); got != want {
		t.Errorf("evaluator calls after the first restart: %d, want %d (the judgments not finished before the kill)", got, want)
	}
	if b, _ := os.ReadFile(judgments); !bytes.Equal(b, judgedRaw) || passed != passedAtKill2 {
		t.Errorf("judgments touched after rank finished (%d evaluator calls after the second kill)", passed-passedAtKill2)
	}
	s := readJSON[generationfmt.Summary](t, filepath.Join(gdir, generationfmt.SummaryFile))
	if s.Status != generationfmt.StatusDone || s.Training == nil || s.Training.Steps != 30 {
		t.Fatalf("summary %+v", s)
	}
	fake.mu.Lock()
	loaded := fake.loaded["gen-1"]
	fake.mu.Unlock()
	if loaded != s.Adapter {
		t.Errorf("fake vLLM holds gen-1 = %q, want the generation's adapter %s", loaded, s.Adapter)
	}
	nextSearchUsesGen1(t, r, task, gate)
}

// nextSearchUsesGen1 runs a one-iteration search asking for gen-1 and
// checks in the fake's call counts that its model calls named gen-1 and
// none the base model.
func nextSearchUsesGen1(t *testing.T, r *searchRig, task string, gate *judgeGate) {
	t.Helper()
	_, _, before := gate.counts()
	out, err := r.massctl("search", "--task", task, "--iterations", "1", "--seed", "5", "--model", "gen-1", "--json")
	var ss search.Summary
	if err != nil || json.Unmarshal(out, &ss) != nil {
		t.Fatalf("search with gen-1: %v %s", err, out)
	}
	_, _, after := gate.counts()
	gen1, base := after["gen-1"]-before["gen-1"], after["base-model"]-before["base-model"]
	t.Logf("next search: %d model calls as gen-1, %d as base-model", gen1, base)
	if gen1 == 0 || base != 0 {
		t.Errorf("the search asked for gen-1 made %d calls as gen-1 and %d as base-model", gen1, base)
	}
}
