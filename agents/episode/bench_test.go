package episode

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mass-dev/mass/sandbox/image"

	"github.com/mass-dev/mass/agents/model/fakeopenai"
	"github.com/mass-dev/mass/agents/model/scripted"
	"github.com/mass-dev/mass/agents/record"
)

// mixedTools cycles through cheap tool calls with distinct arguments (so
// loop detection stays quiet) until n calls were made.
func mixedTools(n int) fakeopenai.Policy {
	return func(r *fakeopenai.Request) fakeopenai.Reply {
		i := r.Turn()
		if i >= n {
			return fakeopenai.Reply{Content: "done"}
		}
		var c fakeopenai.Call
		switch i % 4 {
		case 0:
			c = fakeopenai.Call{Name: "write_file", Arguments: fmt.Sprintf(`{"file_path":"/workspace/b/f%d.py","content":"x = %d\n"}`, i, i)}
		case 1:
			c = fakeopenai.Call{Name: "read_file", Arguments: fmt.Sprintf(`{"file_path":"/workspace/b/f%d.py"}`, i-1)}
		case 2:
			c = fakeopenai.Call{Name: "run_shell_command", Arguments: fmt.Sprintf(`{"command":"echo %d"}`, i)}
		case 3:
			// Distinct arguments: past 100 calls, a call repeated 6 times halts the run.
			c = fakeopenai.Call{Name: "list_directory", Arguments: fmt.Sprintf(`{"path":"/workspace/b","ignore":["none-%d"]}`, i)}
			if i%8 == 7 {
				c = fakeopenai.Call{Name: "glob", Arguments: fmt.Sprintf(`{"pattern":"f%d*.py","path":"/workspace/b"}`, i)}
			}
		}
		return fakeopenai.Reply{Calls: []fakeopenai.Call{c}}
	}
}

// overheads returns, per tool name, the gaps between a thread's model
// response arriving (ts_end of call n) and its next request leaving (ts of
// call n+1): everything massd does for one tool call, model time excluded.
func overheads(recs []record.Record) map[string][]time.Duration {
	out := map[string][]time.Duration{}
	for _, th := range record.Threads(recs) {
		for i := 1; i < len(th); i++ {
			prev := th[i-1]
			if prev.Response == nil || len(prev.Response.ToolCalls) != 1 {
				continue
			}
			name := prev.Response.ToolCalls[0].Function.Name
			d := th[i].TS.Sub(prev.TSEnd)
			out[name] = append(out[name], d)
			out["all"] = append(out["all"], d)
		}
	}
	return out
}

func pct(ds []time.Duration, p float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

// BenchmarkToolCallOverhead measures massd's own time per tool call (tool
// execution in the real container, ledger and recording fsyncs, loop
// checks), excluding model time, and prints p50/p99 per tool.
func BenchmarkToolCallOverhead(b *testing.B) {
	n := max(b.N, 40)
	d, _ := fakeModel(b, mixedTools(n), nil)
	if os.Getenv("MASS_BENCH_IMAGE") == "agent" {
		d.Image = image.AgentRef // run_shell_command under bash
	}
	spec := testTask(b, 30*time.Minute)
	spec.Limits.AgentTurns = n + 5
	dir := filepath.Join(b.TempDir(), "ep")
	b.ResetTimer()
	st, err := Run(context.Background(), d, Options{Task: spec, TaskID: spec.ID, Model: "fake", Dir: dir})
	b.StopTimer()
	if err != nil || !st.Success {
		b.Fatalf("episode: %v %s %s", err, st.Failure, st.Reason)
	}
	recs, err := record.ReadFile(filepath.Join(dir, RequestsFile))
	if err != nil {
		b.Fatal(err)
	}
	ov := overheads(recs)
	// The ledger's duration_ms is the tool's own time (helper or command in
	// the container); the rest of the gap is massd's bookkeeping.
	var inBox []time.Duration
	for _, r := range ledgerRecords(b, dir) {
		if r.Agent == "orchestrator" && r.Tool != "agent_start" && r.Tool != "agent_finish" {
			inBox = append(inBox, time.Duration(r.DurationMS*float64(time.Millisecond)))
		}
	}
	all := ov["all"]
	book := make([]time.Duration, 0, len(all))
	for i, d := range all {
		if i < len(inBox) {
			book = append(book, d-inBox[i])
		}
	}
	ov["(bookkeeping only)"] = book
	ov["(tool in sandbox)"] = inBox
	b.ReportMetric(float64(pct(all, 0.50).Microseconds())/1000, "p50-ms/call")
	b.ReportMetric(float64(pct(all, 0.99).Microseconds())/1000, "p99-ms/call")
	b.Logf("massd overhead per tool call, model time excluded (%d calls; run with -v to see this table):", len(all))
	b.Logf("%-20s %6s %10s %10s", "tool", "calls", "p50", "p99")
	keys := make([]string, 0, len(ov))
	for k := range ov {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b.Logf("%-20s %6d %10s %10s", k, len(ov[k]), pct(ov[k], 0.5).Round(10*time.Microsecond), pct(ov[k], 0.99).Round(10*time.Microsecond))
	}
}

// runConcurrent runs n dry-run episodes at once on one fake endpoint.
func runConcurrent(tb testing.TB, n int) []Status { return runConcurrentWith(tb, n, "") }

// parallel4Workflow makes the scripted orchestrator start four checkers in
// one message.
const parallel4Workflow = `Create an agent team with following agent candidates to solve this problem:
[{"agent_id":"checker-1","role":"checker","instruction":"Check a."},
 {"agent_id":"checker-2","role":"checker","instruction":"Check b."},
 {"agent_id":"checker-3","role":"checker","instruction":"Check c."},
 {"agent_id":"checker-4","role":"checker","instruction":"Check d."}]`

// BenchmarkConcurrentEpisodes16x4 reports the wall time of 16 concurrent
// dry-run episodes whose orchestrators each start 4 workers in one message
// (64 sub-agents, up to 4 per episode at once), and the failed episodes.
func BenchmarkConcurrentEpisodes16x4(b *testing.B) {
	for b.Loop() {
		failed := 0
		for _, st := range runConcurrentWith(b, 16, parallel4Workflow) {
			if !st.Success && st.Exit != ExitCompleted {
				failed++
			}
		}
		b.ReportMetric(float64(failed), "failed-episodes")
	}
}

// runConcurrentWith runs n dry-run episodes of workflow at once.
func runConcurrentWith(tb testing.TB, n int, workflow string) []Status {
	d, _ := fakeModel(tb, scripted.Policy, nil)
	var wg sync.WaitGroup
	sts := make([]Status, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			spec := testTask(tb, 10*time.Minute)
			sts[i], errs[i] = Run(context.Background(), d, Options{Task: spec, TaskID: spec.ID, Model: "fake", Workflow: workflow,
				Dir: filepath.Join(tb.TempDir(), fmt.Sprint("ep", i))})
		}()
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || !sts[i].Success && sts[i].Exit != ExitCompleted {
			tb.Errorf("episode %d: err %v, status %s/%s %s", i, errs[i], sts[i].Exit, sts[i].Failure, sts[i].Reason)
		}
	}
	return sts
}

// TestConcurrentEpisodes runs 16 episodes at once: no errors, no leftovers.
func TestConcurrentEpisodes(t *testing.T) {
	if testing.Short() {
		t.Skip("16 concurrent episodes take a minute on two cores; run without -short")
	}
	for _, st := range runConcurrent(t, 16) {
		if left := leftovers(t, st.EpisodeID); len(left) != 0 {
			t.Errorf("episode %s left %+v", st.EpisodeID, left)
		}
	}
}

// BenchmarkConcurrentEpisodes16 reports the wall time of 16 concurrent dry-run episodes.
func BenchmarkConcurrentEpisodes16(b *testing.B) {
	for b.Loop() {
		runConcurrent(b, 16)
	}
}

// BenchmarkGraderContainer measures what the grader adds to an episode: a
// fresh workspace, the export and shipped inputs copied in, a hardened
// container and one `sh -c` (the guard task's grader on the test image).
func BenchmarkGraderContainer(b *testing.B) {
	needEngine(b)
	spec := guardTask(b)
	for b.Loop() {
		g := gradeFiles(b, image.TestRef, spec, map[string]string{"answer.txt": "12.5\n"})
		if g == nil || !g.Passed {
			b.Fatalf("grade %+v", g)
		}
	}
}
