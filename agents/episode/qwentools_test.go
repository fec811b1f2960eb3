package episode

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mass-dev/mass/agents/model/fakeopenai"
	"github.com/mass-dev/mass/agents/model/scripted"
	"github.com/mass-dev/mass/agents/prompts"
	"github.com/mass-dev/mass/sandbox/image"
)

// The qwen-code parameters and legacy names run against a real sandbox:
// bash, is_background, list_directory ignore, grep_search limit,
// read_file pages on text, todo_write kept in the ledger, replace /
// search_file_content / task resolved to their current tools.
func TestQwenToolShapes(t *testing.T) {
	c := func(name, args string) fakeopenai.Call { return fakeopenai.Call{Name: name, Arguments: args} }
	turn0 := []fakeopenai.Call{
		c("run_shell_command", `{"command":"mkdir -p /workspace/d && printf 'x1\\nx2\\nx3\\n' > /workspace/d/a.py && touch /workspace/d/b.log /workspace/d/c.py","is_background":false,"timeout":60000}`),
		c("run_shell_command", `{"command":"[[ -n \"$BASH_VERSION\" ]] && echo shell=bash"}`),
		c("run_shell_command", `{"command":"sleep 1000","is_background":true}`),
		c("list_directory", `{"path":"/workspace/d","ignore":["*.log"],"file_filtering_options":{"respect_git_ignore":false}}`),
		c("grep_search", `{"pattern":"x[0-9]","path":"/workspace/d","limit":2}`),
		c("read_file", `{"file_path":"/workspace/d/a.py","pages":"1-2"}`),
		c("todo_write", `{"todos":[{"id":"1","content":"write tests","status":"in_progress"},{"id":"2","content":"run them","status":"pending"}]}`),
		c("replace", `{"file_path":"/workspace/d/a.py","old_string":"x1","new_string":"y1"}`),
		c("search_file_content", `{"pattern":"y1","path":"/workspace/d"}`),
		c("task", `{"description":"check files","prompt":"List /workspace/d and report.","run_in_background":false}`),
	}
	var mu sync.Mutex
	var results []string
	p := func(r *fakeopenai.Request) fakeopenai.Reply {
		if !r.HasTool("agent") {
			return fakeopenai.Reply{Content: "worker report: d has a.py and c.py"}
		}
		switch r.Turn() {
		case 0:
			return fakeopenai.Reply{Calls: turn0}
		case 1:
			mu.Lock()
			for _, m := range r.Messages {
				if m.Role == "tool" {
					results = append(results, m.Content)
				}
			}
			mu.Unlock()
		}
		return fakeopenai.Reply{Content: "done"}
	}
	d, _ := fakeModel(t, p, nil)
	d.Image = image.AgentRef // the agent image has bash, as qwen-code's shell expects
	st, dir := runEpisode(t, d, testTask(t, 3*time.Minute), "")
	if !st.Success {
		t.Fatalf("episode failed (%s: %s)", st.Failure, st.Reason)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(results) != len(turn0) {
		t.Fatalf("%d tool results, want %d: %q", len(results), len(turn0), results)
	}
	checks := []struct {
		i        int
		want     string
		notWant  string
		wantFail bool
	}{
		{0, "Exit Code: 0", "", false},
		{1, "shell=bash", "", false},
		{2, "Started in the background (PID", "", false},
		{3, "a.py", "b.log", false},
		{4, "showing the first 2", "x3", false},
		{5, "x1", "", false},
		{6, "[in_progress] write tests", "", false},
		{7, "Successfully modified file", "", false},
		{8, "y1", "", false},
		{9, "worker report", "", false},
	}
	for _, ck := range checks {
		got := results[ck.i]
		if !strings.Contains(got, ck.want) || (ck.notWant != "" && strings.Contains(got, ck.notWant)) ||
			strings.HasPrefix(got, "Error: ") != ck.wantFail || strings.Contains(got, "invalid tool call") {
			t.Errorf("%s: result %q, want it to contain %q (not %q), error %v", turn0[ck.i].Name, got, ck.want, ck.notWant, ck.wantFail)
		}
	}
	byTool := map[string]int{}
	for _, r := range ledgerRecords(t, dir) {
		if r.Agent != "orchestrator" {
			continue
		}
		byTool[r.Tool]++
		var det map[string]any
		_ = json.Unmarshal(r.Detail, &det)
		switch r.Tool {
		case "todo_write":
			if todos, _ := det["todos"].([]any); len(todos) != 2 {
				t.Errorf("todo_write ledger detail = %s, want the two todos", r.Detail)
			}
		case "agent":
			if det["called_as"] != "task" || det["subagent_type"] != "general-purpose" || det["run_in_background"] != false {
				t.Errorf("agent ledger detail = %s", r.Detail)
			}
		}
	}
	for _, name := range []string{"replace", "search_file_content", "task"} {
		if byTool[name] != 0 {
			t.Errorf("ledger records %d calls under the legacy name %s", byTool[name], name)
		}
	}
	if byTool["edit"] != 1 || byTool["grep_search"] != 2 || byTool["agent"] != 1 {
		t.Errorf("ledger tools = %v", byTool)
	}
}

// A directive supplied in place of ours reaches the orchestrator verbatim
// and the scripted orchestrator's agent calls run under it; a bad one is
// refused before anything starts.
func TestSuppliedDirective(t *testing.T) {
	directive := "## Team rules (test fixture)\n\n1. Delegate through `agent` with `run_in_background: false`.\n"
	workflow := `[{"agent_id":"coder","role":"coder","instruction":"write it"}]`
	d, srv := fakeModel(t, scripted.Policy, nil)
	spec := testTask(t, 2*time.Minute)
	dir := filepath.Join(t.TempDir(), "ep")
	st, err := Run(context.Background(), d, Options{Task: spec, TaskID: spec.ID, Model: "fake", Workflow: workflow, Directive: directive, Dir: dir})
	if err != nil || !st.Success {
		t.Fatalf("episode: %v (%s: %s)", err, st.Failure, st.Reason)
	}
	first := srv.Requests()[0].FirstUser()
	if !strings.HasSuffix(first, workflow+"\n\n"+directive) || strings.Contains(first, "Execution directive") {
		t.Errorf("orchestrator's first message = %q, want task, workflow and the supplied directive only", first)
	}
	agents := 0
	for _, r := range ledgerRecords(t, dir) {
		if r.Tool == "agent" && r.OK {
			agents++
			var det map[string]any
			_ = json.Unmarshal(r.Detail, &det)
			if det["run_in_background"] != false {
				t.Errorf("agent call under the directive has detail %s, want run_in_background false", r.Detail)
			}
		}
	}
	if agents < 2 {
		t.Errorf("%d successful agent calls, want the scripted orchestrator's two", agents)
	}
	_, err = Run(context.Background(), d, Options{Task: spec, TaskID: spec.ID, Model: "fake", Workflow: workflow, Directive: " \n", Dir: filepath.Join(t.TempDir(), "ep2")})
	if !errors.Is(err, prompts.ErrDirective) {
		t.Errorf("blank directive: err = %v, want ErrDirective", err)
	}
}
