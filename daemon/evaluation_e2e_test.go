package daemon_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mass-dev/mass/agents/model/scripted"
	"github.com/mass-dev/mass/cycle/judge"
	"github.com/mass-dev/mass/cycle/report"
	"github.com/mass-dev/mass/cycle/rollout"
)

// TestEvaluationScriptedThroughMassd runs the evaluation end to end on
// a real massd with real sandboxes: a rollout of the scripted base model
// and scripted-gen-1 on the held-out example task projectile-sim, two
// external judges that are two more scripted endpoints (each with three
// seeds), the judge-pairs job, and `massctl report --json --html`, whose
// numbers are recomputed here from the raw verdict files. Search and
// generation refuse a judge model.
func TestEvaluationScriptedThroughMassd(t *testing.T) {
	r := newGradedRig(t)
	js, err := scripted.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer js.Close()
	r.stop(false)
	keyFile := filepath.Join(t.TempDir(), "judge.key") // the judges' endpoint wants its secret
	if err := os.WriteFile(keyFile, []byte(js.Key()), 0o600); err != nil {
		t.Fatal(err)
	}
	conf, _ := os.ReadFile(r.conf)
	conf = fmt.Appendf(conf, "models:\n  judge-a:\n    base_url: %s\n    model: %s\n    api_key_file: %s\n  judge-b:\n    base_url: %s\n    model: %s\n    api_key_file: %s\n"+
		"judges:\n  - model: judge-a\n    seeds: [42, 43, 44]\n  - model: judge-b\n", js.URL(), scripted.ModelID, keyFile, js.URL(), scripted.ModelID, keyFile)
	if err := os.WriteFile(r.conf, conf, 0o600); err != nil {
		t.Fatal(err)
	}
	r.start()
	task := "../examples/tasks/projectile-sim/task.yaml"
	if _, err := r.massctl("task", "add", task); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"search", "--task", task, "--model", "judge-a", "--iterations", "1", "--json"},
		{"generation", "start", "--tasks", "projectile-sim", "--model", "judge-b"},
		{"job", "start", "search", "--task", "projectile-sim", "--params", `{"model":"scripted","optimizer_model":"judge-a"}`},
	} {
		if out, err := r.massctl(args...); err == nil || !strings.Contains(err.Error(), "external judge") {
			t.Errorf("massctl %s: a judge model was not refused: %v %s", strings.Join(args, " "), err, out)
		}
	}
	out, err := r.massctl("eval", "rollout", "--tasks", "projectile-sim", "--models", "scripted,"+scripted.Gen1Name,
		"--episodes", "3", "--name", "e2e", "--seed", "5", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var ro rollout.Summary
	if err := json.Unmarshal(out, &ro); err != nil || len(ro.Runs) != 6 {
		t.Fatalf("rollout: %v %s", err, out)
	}
	for _, x := range ro.Runs {
		if x.EpisodeID == "" || !x.Graded || x.Seed != rollout.SeedFor(5, "projectile-sim", x.Index) {
			t.Errorf("run %+v: not a graded episode at its paired seed", x)
		}
	}
	if _, err = r.massctl("eval", "judge", "--rollout", "e2e", "--json"); err != nil {
		t.Fatal(err)
	}
	html := filepath.Join(r.tmp, "report.html")
	if out, err = r.massctl("report", "--eval", "e2e", "--html", html, "--json", scripted.Gen1Name); err != nil {
		t.Fatal(err)
	}
	var rep report.Report
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("report: %v %s", err, out)
	}
	recompute(t, &rep, filepath.Join(r.data, "evals", "e2e"))
	page, err := os.ReadFile(html)
	if err != nil || !strings.Contains(string(page), `data-plot="win-rates"`) || strings.Contains(string(page), "<script") {
		t.Errorf("report page: %v %.300s", err, page)
	}
	for _, a := range rep.Audit {
		if a.N != 3 || a.Audited != 3 || a.Delegation != 3 || a.CodeHandoff != 3 {
			t.Errorf("audit %s: %+v (the scripted bare run delegates twice and hands one file off)", a.Model, a)
		}
	}
	agentMode(t, r)
	t.Logf("gen-1 vs base: %d wins, %d losses, %d ties over %d pairs; %d blind spots", rep.WinRates[0].Overall.Wins,
		rep.WinRates[0].Overall.Losses, rep.WinRates[0].Overall.Ties, rep.WinRates[0].Overall.Pairs, len(rep.BlindSpots))
}

// recompute tallies the raw verdict files and compares them with the
// report's win rate and agreement; the scripted gen-1's bare solver
// checks its work, so the external judges prefer it.
func recompute(t *testing.T, rep *report.Report, dir string) {
	t.Helper()
	type raw struct {
		Key                              string
		Seed                             int64
		Swapped                          bool
		Candidate, Model, Status, Winner string
		External                         bool
		WinnerLabel                      string `json:"winner_label"`
		Task                             string
		Index                            int
	}
	var vs []raw
	filepath.Walk(filepath.Join(dir, "verdicts"), func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			var v raw
			b, _ := os.ReadFile(p)
			if json.Unmarshal(b, &v) != nil {
				t.Errorf("verdict %s does not parse", p)
			}
			if v.Swapped != judge.Swapped(v.Seed, v.Key) {
				t.Errorf("verdict %s: swapped %v, but seed %d and key %s decide %v", p, v.Swapped, v.Seed, v.Key, !v.Swapped)
			}
			vs = append(vs, v)
		}
		return nil
	})
	if len(vs) != 3*(6+2) || rep.Verdicts != len(vs) {
		t.Fatalf("%d verdict files, report %d; want 3 pairs × (2 judges × 3 seeds + 2 self-judges)", len(vs), rep.Verdicts)
	}
	w, l, ties := 0, 0, 0
	for _, v := range vs {
		switch {
		case !v.External || v.Status != "valid":
		case v.Winner == "tie":
			ties++
		case v.WinnerLabel == v.Candidate:
			w++
		default:
			l++
		}
	}
	o := rep.WinRates[0].Overall
	if o.Wins != w || o.Losses != l || o.Ties != ties || o.Pairs != 3 {
		t.Errorf("report %+v, files %d wins %d losses %d ties", o, w, l, ties)
	}
	if w+l == 0 || o.Rate == nil || *o.Rate != float64(w)/float64(w+l) || *o.Rate <= 0.5 {
		t.Errorf("win rate %v from %d/%d: want gen-1 preferred", o.Rate, w, w+l)
	}
	if len(rep.Agreement) != 2 {
		t.Errorf("agreement %+v: want both rollout models as self-judges", rep.Agreement)
	}
}

// agentMode judges a one-pair rollout in agent mode: every verdict is a
// judge-agent episode of its own.
func agentMode(t *testing.T, r *searchRig) {
	t.Helper()
	if _, err := r.massctl("eval", "rollout", "--tasks", "projectile-sim", "--models", "scripted,"+scripted.Gen1Name,
		"--episodes", "1", "--name", "e2e-agent", "--seed", "6", "--json"); err != nil {
		t.Fatal(err)
	}
	out, err := r.massctl("eval", "judge", "--rollout", "e2e-agent", "--mode", "agent", "--no-self", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Mode   string `json:"mode"`
		Models []struct {
			Overall struct{ Wins, Losses, Ties int } `json:"overall"`
		} `json:"models"`
	}
	if err := json.Unmarshal(out, &res); err != nil || res.Mode != "agent" || res.Models[0].Overall.Wins+res.Models[0].Overall.Losses+res.Models[0].Overall.Ties != 6 {
		t.Fatalf("agent mode: %v %s", err, out)
	}
	paths, _ := filepath.Glob(filepath.Join(r.data, "evals", "e2e-agent", "verdicts", "*", "*", "*.json"))
	for _, p := range paths {
		var v struct {
			Mode     string   `json:"mode"`
			Episodes []string `json:"episodes"`
		}
		b, _ := os.ReadFile(p)
		if json.Unmarshal(b, &v) != nil || v.Mode != "agent" || len(v.Episodes) == 0 {
			t.Errorf("%s: not an agent-mode verdict with its judge episode: %s", p, b)
		}
	}
	if len(paths) != 6 {
		t.Errorf("%d agent verdicts, want 2 judges × 3 seeds", len(paths))
	}
}

// TestRolloutKillResumes kills massd with SIGKILL while a rollout runs,
// restarts it, and checks that the job completes with no finished
// episode run again and every cut-off attempt closed.
func TestRolloutKillResumes(t *testing.T) {
	r := newGradedRig(t)
	if _, err := r.massctl("task", "add", "../examples/tasks/projectile-sim/task.yaml"); err != nil {
		t.Fatal(err)
	}
	out, err := r.massctl("eval", "rollout", "--tasks", "projectile-sim", "--models", "scripted,"+scripted.Gen1Name,
		"--episodes", "4", "--name", "kill", "--concurrency", "2")
	if err != nil {
		t.Fatal(err)
	}
	jobID := strings.TrimSpace(string(out))
	books := []string{rollout.BookPath(filepath.Join(r.data, "evals", "kill"), "projectile-sim", "scripted"),
		rollout.BookPath(filepath.Join(r.data, "evals", "kill"), "projectile-sim", scripted.Gen1Name)}
	finished := func() (map[string]int, []e2eSlot) {
		done := map[string]int{}
		var all []e2eSlot
		for _, p := range books {
			var slots []e2eSlot
			if b, err := os.ReadFile(p); err == nil && json.Unmarshal(b, &slots) == nil {
				for _, s := range slots {
					if s.Result != nil {
						done[p+s.Name] = len(s.Attempts)
					}
					s.Name = p + s.Name
					all = append(all, s)
				}
			}
		}
		return done, all
	}
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		if done, _ := finished(); len(done) >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the rollout never finished 2 episodes")
		}
	}
	r.stop(true)
	before, _ := finished()
	r.start()
	if j := r.waitJob(jobID, 5*time.Minute); j.State != "succeeded" {
		t.Fatalf("job after restart: %s %s", j.State, j.Error)
	}
	done, after := finished()
	if len(done) != 8 {
		t.Errorf("%d of 8 slots finished", len(done))
	}
	for _, s := range after {
		if n, ok := before[s.Name]; ok && len(s.Attempts) != n {
			t.Errorf("slot %s finished before the kill, run again: %+v", s.Name, s.Attempts)
		}
		for i, a := range s.Attempts {
			if a.Status == "running" || (a.Status == "interrupted" && i == len(s.Attempts)-1) {
				t.Errorf("slot %s: attempt %d left %s", s.Name, a.N, a.Status)
			}
		}
	}
	t.Logf("killed with %d of 8 episodes finished", len(before))
}
