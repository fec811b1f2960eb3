package daemon_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mass-dev/mass/agents/model/fakeopenai"
	"github.com/mass-dev/mass/agents/model/scripted"
	"github.com/mass-dev/mass/cycle/judge"
	"github.com/mass-dev/mass/cycle/search"
	"github.com/mass-dev/mass/daemon/api"
)

// garbled answers the evaluator and optimizer with text that does not
// parse: the first three evaluator calls (one whole judgment) and the first
// three optimizer calls (one whole proposal), then the first attempt of
// every later judgment; everything else is the scripted policy.
type garbled struct{ eval, opt atomic.Int64 }

func (g *garbled) policy(r *fakeopenai.Request) fakeopenai.Reply {
	first := r.FirstUser()
	switch {
	case strings.Contains(first, judge.Marker):
		if n := g.eval.Add(1); n <= 3 || r.Turn() == 0 {
			return fakeopenai.Reply{Content: `I prefer A. {"winner": "A", "rationale": ` + "\n"}
		}
	case len(r.Messages) > 0 && strings.HasPrefix(r.Messages[0].Content, search.OptimizerMarker): // the system prompt
		if g.opt.Add(1) <= 3 {
			return fakeopenai.Reply{Content: `{"improved_multi_agent_design": "Create a team of a planner and a coder", "changes_from_previous": "x"}`}
		}
	}
	return scripted.Policy(r)
}

// TestSearchUnparseableRoleReplies runs a search whose judge and optimizer
// model (a faithful fake endpoint) returns unparseable verdicts and
// designs: each is retried with the parse error shown, a third failure is
// recorded as an invalid judgment or a failed iteration, and the search
// completes.
func TestSearchUnparseableRoleReplies(t *testing.T) {
	g := &garbled{}
	srv := fakeopenai.New(g.policy)
	if err := srv.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	r := newSearchRig(t, map[string]string{"garbled": srv.URL()})
	ctx := context.Background()
	task, err := r.cl.AddTask(ctx, "../examples/tasks/sales-analysis/task.yaml")
	if err != nil {
		t.Fatal(err)
	}
	params, _ := json.Marshal(map[string]any{"model": "scripted", "judge_model": "garbled", "optimizer_model": "garbled", "iterations": 2})
	job, err := r.cl.SubmitJob(ctx, api.JobRequest{Kind: search.KindName, TaskID: task.ID, Params: params})
	if err != nil {
		t.Fatal(err)
	}
	final := r.waitJob(job.ID, 4*time.Minute)
	if final.State != api.StateSucceeded {
		t.Fatalf("search %s: %s", final.State, final.Error)
	}
	var sum search.Summary
	if err := json.Unmarshal(final.Result, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.InvalidJudgments != 1 || sum.Comparisons != 1 || sum.FailedIterations != 1 || sum.ChampionVersion != 2 ||
		sum.RetainedVersion == nil || *sum.RetainedVersion != 2 || !sum.BeatsReference {
		t.Fatalf("summary %+v", sum)
	}
	inv := readJSON[judge.Result](t, filepath.Join(sum.Dir, "comparisons", "v0_vs_no_harness", "result.json"))
	if inv.Status != judge.StatusInvalid || inv.Winner != judge.StatusInvalid || inv.Attempts != 3 || len(inv.Errors) != 3 {
		t.Errorf("invalid judgment %+v", inv)
	}
	ok := readJSON[judge.Result](t, filepath.Join(sum.Dir, "comparisons", "v2_vs_no_harness", "result.json"))
	if ok.Status != judge.StatusValid || ok.Attempts != 2 {
		t.Errorf("retried judgment %+v", ok)
	}
	opt := readJSON[search.OptimizerResult](t, filepath.Join(sum.Dir, search.PromptsDir, "v0_to_v1", "result.json"))
	if opt.Status != "failed" || opt.Attempts != 3 || opt.Proposal != nil {
		t.Errorf("failed optimizer %+v", opt)
	}
	if _, err := readFileErr(filepath.Join(sum.Dir, "versions", "multi_agent_design_v1.txt")); err == nil {
		t.Error("a failed iteration left a design")
	}
	cmps := readJSONL[search.Comparison](t, filepath.Join(sum.Dir, search.ComparisonHistoryFile))
	// v0's invalid verdict counts as a tie (no baseline win), so v2's
	// baseline win takes the crown outright: no arbitration is asked.
	if len(cmps) != 2 || cmps[0].Outcome != search.OutcomeInvalid || cmps[0].Winner != search.WinTie || cmps[0].ChampionChanged || !cmps[1].ChampionChanged {
		t.Errorf("comparison history %+v", cmps)
	}
	// Each retry showed the model its parse error.
	shown := 0
	for _, req := range srv.Requests() {
		if n := len(req.Messages); n > 2 && strings.HasPrefix(req.Messages[n-1].Content, "Your reply could not be used: ") {
			shown++
		}
	}
	// v0's judgment 2, the failed proposal 2, v2's baseline judgment 1
	// (the reference rule asks no arbitration here).
	if shown != 2+2+1 {
		t.Errorf("%d retries showed the parse error, want 5", shown)
	}
}

// TestJudgeAgentCannotWriteWorkspaces is the probe of the agent-mode claim
// that both judged workspaces are read-only to the judge: a judge agent
// tries to overwrite a deliverable of workspace A and reports the result.
func TestJudgeAgentCannotWriteWorkspaces(t *testing.T) {
	srv := fakeopenai.New(func(r *fakeopenai.Request) fakeopenai.Reply {
		if !strings.Contains(r.FirstUser(), judge.AgentMarker) {
			return scripted.Policy(r)
		}
		if r.Turn() == 0 {
			return fakeopenai.Reply{Calls: []fakeopenai.Call{{Name: "run_shell_command",
				Arguments: `{"command":"echo tampered > /workspace/judge/A/summary.json; echo rc=$?; cat /workspace/judge/A/summary.json | head -c 40"}`}}}
		}
		out, _ := r.LastTool()
		b, _ := json.Marshal(map[string]string{"winner": "tie", "rationale": "probe: " + out})
		return fakeopenai.Reply{Content: string(b)}
	})
	if err := srv.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	r := newSearchRig(t, map[string]string{"prober": srv.URL()})
	out, err := r.massctl("search", "--task", "../examples/tasks/sales-analysis/task.yaml", "--iterations", "0",
		"--model", "scripted", "--judge-model", "prober", "--judge-mode", "agent", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var sum search.Summary
	if err := json.Unmarshal(out, &sum); err != nil {
		t.Fatal(err)
	}
	res := readJSON[judge.Result](t, filepath.Join(sum.Dir, "comparisons", "v0_vs_no_harness", "result.json"))
	if res.Status != judge.StatusValid || strings.Contains(res.Rationale, "rc=0") || !strings.Contains(res.Rationale, "rc=1") ||
		!strings.Contains(res.Rationale, "total_revenue") {
		t.Fatalf("the judge could write a judged workspace: %q", res.Rationale)
	}
}
