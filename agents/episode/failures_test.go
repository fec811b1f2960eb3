package episode

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mass-dev/mass/agents/ledger"
	"github.com/mass-dev/mass/agents/loop"
	"github.com/mass-dev/mass/agents/model"
	"github.com/mass-dev/mass/agents/model/fakeopenai"
	"github.com/mass-dev/mass/agents/model/scripted"
	"github.com/mass-dev/mass/agents/record"
)

// script answers the orchestrator turn by turn; past the end it gives a final answer.
func script(turns ...fakeopenai.Reply) fakeopenai.Policy {
	return func(r *fakeopenai.Request) fakeopenai.Reply {
		if t := r.Turn(); t < len(turns) {
			return turns[t]
		}
		return fakeopenai.Reply{Content: "done"}
	}
}

func calls(cs ...fakeopenai.Call) fakeopenai.Reply { return fakeopenai.Reply{Calls: cs} }

func sh(cmd string) fakeopenai.Call {
	return fakeopenai.Call{Name: "run_shell_command", Arguments: `{"command": "` + cmd + `"}`}
}

// toolResults returns the tool messages of the recorded call with seq.
func toolResults(t *testing.T, dir string, seq int64) []string {
	t.Helper()
	recs, err := record.ReadFile(dir + "/" + RequestsFile)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range recs[seq-1].Request.Messages {
		if m.Role == "tool" {
			out = append(out, m.Content)
		}
	}
	return out
}

func TestMalformedToolCalls(t *testing.T) {
	d, _ := fakeModel(t, script(calls(
		fakeopenai.Call{Name: "write_file", Arguments: `{"file_path": "/workspace/a.py", "content": `},
		fakeopenai.Call{Name: "launch_missiles", Arguments: `{}`},
		fakeopenai.Call{Name: "edit", Arguments: `{"file_path": "/workspace/notes.md", "old_string": "x"}`},
		fakeopenai.Call{Name: "read_file", Arguments: `{"file_path": "/workspace/notes.md", "offset": "first"}`},
		fakeopenai.Call{Name: "read_file", Arguments: `{"file_path": "/workspace/nope.txt"}`},
	)), nil)
	st, dir := runEpisode(t, d, testTask(t, 2*time.Minute), "")
	if !st.Success {
		t.Fatalf("episode failed (%s: %s); malformed calls must not end it", st.Failure, st.Reason)
	}
	got := toolResults(t, dir, 2)
	want := []string{"not a JSON object", `unknown tool "launch_missiles"`, `missing required parameter "new_string"`,
		`"offset" must be an integer, got a string`, "Error:"}
	if len(got) != len(want) {
		t.Fatalf("tool results = %q, want %d", got, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], "Error: ") || !strings.Contains(got[i], want[i]) {
			t.Errorf("tool result %d = %q, want an error containing %q", i, got[i], want[i])
		}
	}
	failed := 0
	for _, r := range ledgerRecords(t, dir) {
		if r.Agent == "orchestrator" && !r.OK && r.Tool != ledger.ToolAgentFinish {
			failed++
		}
	}
	if got, want := failed, 5; got != want {
		t.Errorf("failed tool records in the ledger = %d, want %d", got, want)
	}
}

// flaky fails each distinct request first with a 500, then with a timeout,
// then lets p answer.
func flaky(p fakeopenai.Policy) fakeopenai.Policy {
	var mu sync.Mutex
	seen := map[[32]byte]int{}
	return func(r *fakeopenai.Request) fakeopenai.Reply {
		mu.Lock()
		k := sha256.Sum256(r.Raw)
		seen[k]++
		n := seen[k]
		mu.Unlock()
		switch n {
		case 1:
			return fakeopenai.Reply{Status: 500, Error: "engine overloaded"}
		case 2:
			return fakeopenai.Reply{Delay: 2 * time.Second}
		}
		return p(r)
	}
}

func TestEndpointFailuresAreRetried(t *testing.T) {
	d, srv := fakeModel(t, flaky(scripted.Policy), func(c *model.Config) { c.Timeout = 400 * time.Millisecond })
	st, dir := runEpisode(t, d, testTask(t, 3*time.Minute), "")
	if !st.Success {
		t.Fatalf("episode failed (%s: %s), want retries to hide endpoint errors", st.Failure, st.Reason)
	}
	recs, err := record.ReadFile(dir + "/" + RequestsFile)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(srv.Requests()), 3*len(recs); got != want {
		t.Errorf("server saw %d requests, want %d (three attempts per recorded call)", got, want)
	}
	for _, r := range recs {
		if r.Status != record.StatusOK || r.Attempts != 3 {
			t.Errorf("call %d: status %s after %d attempts, want ok after 3", r.Seq, r.Status, r.Attempts)
		}
	}
	if got, want := st.ModelCalls, len(recs); got != want {
		t.Errorf("model calls = %d, want %d (retries do not count)", got, want)
	}
}

func TestEndpointDownIsModelError(t *testing.T) {
	d, _ := fakeModel(t, func(*fakeopenai.Request) fakeopenai.Reply { return fakeopenai.Reply{Status: 503} },
		func(c *model.Config) { c.MaxRetries = 2 })
	st, dir := runEpisode(t, d, testTask(t, time.Minute), "")
	if got, want := st.Failure, FailModel; got != want || st.Success {
		t.Fatalf("failure = %q (%s), want %q", got, st.Reason, want)
	}
	recs, err := record.ReadFile(dir + "/" + RequestsFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Status != record.StatusError || recs[0].Response != nil {
		t.Fatalf("recording = %+v, want one error record without response", recs)
	}
	if left := leftovers(t, st.EpisodeID); len(left) != 0 {
		t.Errorf("leftovers: %+v", left)
	}
}

func TestLoopHalts(t *testing.T) {
	ls := sh("ls /workspace")
	var many []fakeopenai.Call
	for i := range 5 {
		many = append(many, sh("echo "+strings.Repeat("x", i+1)))
	}
	chant := strings.Repeat("Let me check the workspace once more before I answer. ", 12)
	tests := []struct {
		name string
		p    fakeopenai.Policy
		cfg  loop.Config
		rule string
	}{
		{"five identical calls", script(calls(ls), calls(ls), calls(ls), calls(ls), calls(ls), calls(ls)), loop.Config{}, loop.RuleConsecutive},
		{"same call six times in a turn", script(calls(ls, ls, ls, sh("true"), ls, ls, ls)), loop.Config{}, loop.RuleSameInTurn},
		{"per-turn cap", script(calls(many...)), loop.Config{CallsPerTurn: 4}, loop.RuleTurnCap},
		{"chanting", script(fakeopenai.Reply{Content: chant}), loop.Config{}, loop.RuleChanting},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, _ := fakeModel(t, tt.p, nil)
			d.Loop = tt.cfg
			st, dir := runEpisode(t, d, testTask(t, 2*time.Minute), "")
			if got, want := st.Failure, FailLoop; got != want {
				t.Fatalf("failure = %q (%s), want %q", got, st.Reason, want)
			}
			var halts []ledger.Record
			for _, r := range ledgerRecords(t, dir) {
				if r.Tool == ledger.ToolLoopHalt {
					halts = append(halts, r)
				}
			}
			if len(halts) != 1 || !strings.Contains(string(halts[0].Detail), tt.rule) {
				t.Fatalf("loop_halt records = %+v, want one with rule %s", halts, tt.rule)
			}
		})
	}
}

// A worker that loops is halted; the orchestrator reads why and the
// episode goes on. Loop halts of workers are not episode failures.
func TestWorkerLoopIsContained(t *testing.T) {
	ls := sh("ls /workspace")
	p := func(r *fakeopenai.Request) fakeopenai.Reply {
		if r.HasTool("agent") {
			if r.Turn() == 0 {
				return calls(fakeopenai.Call{Name: "agent", Arguments: `{"description":"loop","prompt":"list files","subagent_type":"general-purpose"}`})
			}
			res, _ := r.LastTool()
			return fakeopenai.Reply{Content: "worker said: " + res}
		}
		return calls(ls)
	}
	d, _ := fakeModel(t, p, nil)
	st, dir := runEpisode(t, d, testTask(t, 2*time.Minute), "")
	if !st.Success {
		t.Fatalf("episode failed (%s: %s)", st.Failure, st.Reason)
	}
	if !strings.Contains(st.Final, "loop detected") {
		t.Errorf("orchestrator's view of the worker = %q, want the loop halt reason", st.Final)
	}
	if rep := auditEpisode(t, dir, st.EpisodeID); rep.LoopHalts != 1 || rep.Delegation != 0 {
		t.Errorf("audit loop halts = %d, delegation = %d; want 1, 0", rep.LoopHalts, rep.Delegation)
	}
}

func TestEpisodeTimeoutKillsContainers(t *testing.T) {
	d, _ := fakeModel(t, script(calls(sh("sleep 120"))), nil)
	start := time.Now()
	st, _ := runEpisode(t, d, testTask(t, 4*time.Second), "")
	if got, want := st.Failure, FailTimeout; got != want {
		t.Fatalf("failure = %q (%s), want %q", got, st.Reason, want)
	}
	if took := time.Since(start); took > 60*time.Second {
		t.Errorf("episode took %s; the clock did not stop the sleeping command", took)
	}
	if left := leftovers(t, st.EpisodeID); len(left) != 0 {
		t.Errorf("containers/volumes left after timeout: %+v", left)
	}
	if st.WorkspaceExport == "" {
		t.Error("timed-out episode was not exported")
	}
}

func TestProtectedPaths(t *testing.T) {
	d, _ := fakeModel(t, script(calls(
		fakeopenai.Call{Name: "write_file", Arguments: `{"file_path": "/workspace/data/truth.txt", "content": "43"}`},
		fakeopenai.Call{Name: "edit", Arguments: `{"file_path": "data/truth.txt", "old_string": "42", "new_string": "43"}`},
		sh("echo 43 > /workspace/data/truth.txt"),
	)), nil)
	st, dir := runEpisode(t, d, testTask(t, 2*time.Minute), "")
	if !st.Success {
		t.Fatalf("episode failed (%s: %s)", st.Failure, st.Reason)
	}
	res := toolResults(t, dir, 2)
	for i := range 2 {
		if !strings.Contains(res[i], "protected path") {
			t.Errorf("tool result %d = %q, want a protected-path error", i, res[i])
		}
	}
	if !strings.Contains(res[2], "Exit Code: ") || strings.Contains(res[2], "Exit Code: 0") {
		t.Errorf("shell write into a protected path = %q, want a non-zero exit", res[2])
	}
	denied := 0
	for _, r := range ledgerRecords(t, dir) {
		if r.Tool == ledger.ToolProtectedWriteDenied {
			denied++
		}
	}
	if got, want := denied, 2; got != want {
		t.Errorf("protected_write_denied records = %d, want %d", got, want)
	}
	// The shell write counts too; the denials held, so nothing changed.
	if rep := auditEpisode(t, dir, st.EpisodeID); rep.ProtectedPathAttempts < 3 || rep.ProtectedPathViolations != 0 {
		t.Errorf("audit protected attempts = %d, violations %d, want at least 3 and 0", rep.ProtectedPathAttempts, rep.ProtectedPathViolations)
	}
}

func TestToolResultTruncated(t *testing.T) {
	d, _ := fakeModel(t, script(calls(sh("i=0; while [ $i -lt 3000 ]; do echo line-$i-padding-padding-padding; i=$((i+1)); done"))), nil)
	_, dir := runEpisode(t, d, testTask(t, 2*time.Minute), "")
	res := toolResults(t, dir, 2)
	if got, want := len(res), 1; got != want {
		t.Fatalf("tool results = %d, want %d", got, want)
	}
	if !strings.Contains(res[0], "[... truncated: ") || len(res[0]) > 70<<10 {
		t.Fatalf("tool result of %d bytes without the truncation marker", len(res[0]))
	}
}

func TestAgentTurnLimit(t *testing.T) {
	var cs []fakeopenai.Reply
	for i := range 10 {
		cs = append(cs, calls(sh("echo "+strings.Repeat("y", i+1))))
	}
	d, _ := fakeModel(t, script(cs...), nil)
	spec := testTask(t, 2*time.Minute)
	spec.Limits.AgentTurns = 3
	st, dir := runEpisode(t, d, spec, "")
	if got, want := st.Failure, FailTimeout; got != want || !strings.Contains(st.Reason, "used its 3 turns") {
		t.Fatalf("failure = %q (%s), want %q about the turn limit", got, st.Reason, want)
	}
	recs, err := record.ReadFile(dir + "/" + RequestsFile)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(recs), 3; got != want {
		t.Errorf("model calls = %d, want %d", got, want)
	}
}

func TestWorkflowTeacherPrompt(t *testing.T) {
	d, srv := fakeModel(t, scripted.Policy, nil)
	st, _ := runEpisode(t, d, testTask(t, 2*time.Minute), `[{"agent_id":"coder","role":"coder","instruction":"write it"}]`)
	if !st.Success {
		t.Fatalf("episode failed: %s", st.Reason)
	}
	first := srv.Requests()[0].FirstUser()
	if !strings.Contains(first, `"agent_id":"coder"`) || !strings.Contains(first, "Execution directive") {
		t.Errorf("orchestrator's first message = %q, want task + workflow + directive", first)
	}
}

func TestCancelStopsEverything(t *testing.T) {
	d, _ := fakeModel(t, script(calls(sh("sleep 120"))), nil)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(3*time.Second, cancel)
	spec := testTask(t, 10*time.Minute)
	st, err := Run(ctx, d, Options{Task: spec, TaskID: spec.ID, Model: "fake", Dir: filepath.Join(t.TempDir(), "ep")})
	if err != nil {
		t.Fatal(err)
	}
	if st.Exit != ExitCancelled || st.Failure != FailCancelled {
		t.Fatalf("status = %s/%s (%s), want cancelled", st.Exit, st.Failure, st.Reason)
	}
	if left := leftovers(t, st.EpisodeID); len(left) != 0 {
		t.Errorf("leftovers after cancel: %+v", left)
	}
}

// The API key reaches the endpoint and nothing else: not the recording,
// the ledger, the status files or the workspace.
func TestAPIKeyStaysOutOfTheRecord(t *testing.T) {
	const key = "sk-mass-test-3f9a7c1e"
	t.Setenv("MASS_FAKE_KEY", key)
	d, srv := fakeModel(t, scripted.Policy, func(c *model.Config) { c.APIKeyEnv = "MASS_FAKE_KEY" })
	st, dir := runEpisode(t, d, testTask(t, 2*time.Minute), "")
	if !st.Success {
		t.Fatalf("episode failed: %s", st.Reason)
	}
	if got, want := srv.Requests()[0].Header["Authorization"], "Bearer "+key; got != want {
		t.Fatalf("endpoint got authorization %q, want %q", got, want)
	}
	err := filepath.WalkDir(dir, func(p string, de fs.DirEntry, err error) error {
		if err != nil || de.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(key)) {
			t.Errorf("%s contains the API key", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
