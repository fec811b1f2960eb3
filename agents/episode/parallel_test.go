package episode

import (
	"encoding/json"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mass-dev/mass/agents/ledger"
	"github.com/mass-dev/mass/agents/model/scripted"
	"github.com/mass-dev/mass/agents/record"
)

// parallelWorkflow is a workflow whose two checkers the scripted
// orchestrator starts in one message (two agent calls); checker-1 reads
// the builder's Python file (one code handoff).
const parallelWorkflow = `Create an agent team with following agent candidates to solve this problem:
[{"agent_id":"builder","role":"builder","instruction":"Write the program."},
 {"agent_id":"checker-1","role":"checker","instruction":"Check the program."},
 {"agent_id":"checker-2","role":"checker","instruction":"Check the outputs."},
 {"agent_id":"reporter","role":"reporter","instruction":"Report."}]`

// agentSpan is an agent's wall time as the ledger has it.
type agentSpan struct{ start, finish time.Time }

func agentSpans(recs []ledger.Record) map[string]agentSpan {
	out := map[string]agentSpan{}
	for _, r := range recs {
		s := out[r.Agent]
		switch r.Tool {
		case ledger.ToolAgentStart:
			s.start = r.TS
		case ledger.ToolAgentFinish:
			s.finish = r.TS
		}
		out[r.Agent] = s
	}
	return out
}

func overlap(a, b agentSpan) bool { return a.start.Before(b.finish) && b.start.Before(a.finish) }

// Two workers started in one message run at the same time: their wall
// times overlap in the ledger, the results come back in call order, and
// the audit's delegation and handoff counts equal those of the same
// episode run one worker at a time.
func TestParallelAgentCalls(t *testing.T) {
	type outcome struct {
		spans                map[string]agentSpan
		delegation, handoffs int
		reports, results     []string
	}
	run := func(parallel int) outcome {
		d, _ := fakeModel(t, scripted.Policy, nil)
		d.ParallelAgents = parallel
		st, dir := runEpisode(t, d, testTask(t, 3*time.Minute), parallelWorkflow)
		if st.Exit != ExitCompleted {
			t.Fatalf("parallel=%d: episode ended %s (%s): %s", parallel, st.Exit, st.Failure, st.Reason)
		}
		recs := ledgerRecords(t, dir)
		var o outcome
		o.spans = agentSpans(recs)
		for _, r := range recs {
			if r.Tool == "agent" {
				var det struct{ Subagent, Description string }
				_ = json.Unmarshal(r.Detail, &det)
				o.reports = append(o.reports, det.Subagent+"="+det.Description)
			}
		}
		sort.Strings(o.reports) // the ledger holds them in the order they ended
		o.results = toolResultOrder(t, dir)
		rep := auditEpisode(t, dir, st.EpisodeID)
		o.delegation, o.handoffs = rep.Delegation, rep.CodeHandoff
		return o
	}
	par, seq := run(0), run(1)
	if !overlap(par.spans["worker-2"], par.spans["worker-3"]) {
		t.Errorf("checkers started in one message did not overlap: worker-2 %v, worker-3 %v", par.spans["worker-2"], par.spans["worker-3"])
	}
	if overlap(seq.spans["worker-2"], seq.spans["worker-3"]) {
		t.Errorf("with ParallelAgents 1 the checkers overlapped: %v, %v", seq.spans["worker-2"], seq.spans["worker-3"])
	}
	if par.delegation != 4 || par.delegation != seq.delegation || par.handoffs != 1 || par.handoffs != seq.handoffs {
		t.Errorf("parallel: %d delegations, %d handoffs; sequential: %d, %d; want 4 and 1 in both",
			par.delegation, par.handoffs, seq.delegation, seq.handoffs)
	}
	for _, o := range []outcome{par, seq} {
		if got, want := strings.Join(o.results, " "), "builder checker-1 checker-2 reporter"; got != want {
			t.Errorf("tool results reached the orchestrator as %q, want call order %q", got, want)
		}
	}
	want := []string{"worker-1=builder: builder", "worker-2=checker-1: checker", "worker-3=checker-2: checker", "worker-4=reporter: reporter"}
	for _, o := range []outcome{par, seq} {
		if len(o.reports) != len(want) {
			t.Fatalf("agent calls %q, want %q", o.reports, want)
		}
		for i := range want {
			if o.reports[i] != want[i] {
				t.Errorf("agent call %d = %q, want %q (ids follow call order)", i, o.reports[i], want[i])
			}
		}
	}
}

// toolResultOrder reads the orchestrator's last request and names, for
// each tool message in order, the workflow agent whose report it carries;
// it checks each answers the tool call in the same place.
func toolResultOrder(t *testing.T, dir string) []string {
	t.Helper()
	recs, err := record.ReadFile(filepath.Join(dir, RequestsFile))
	if err != nil {
		t.Fatal(err)
	}
	var last record.Record
	for _, r := range recs {
		if r.Agent == "orchestrator" {
			last = r
		}
	}
	var out, calls []string
	for _, m := range last.Request.Messages {
		for _, tc := range m.ToolCalls {
			calls = append(calls, tc.ID)
		}
		if m.Role != "tool" {
			continue
		}
		if len(out) >= len(calls) || m.ToolCallID != calls[len(out)] {
			t.Fatalf("tool message %d answers %q, want call %v", len(out), m.ToolCallID, calls)
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(m.Content, scripted.Label+" "), " ")
		out = append(out, name)
	}
	return out
}
