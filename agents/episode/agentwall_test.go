package episode

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mass-dev/mass/agents/agent"
	"github.com/mass-dev/mass/agents/ledger"
	"github.com/mass-dev/mass/agents/model/fakeopenai"
)

// limits.agent_wall_time halts the agent that runs past it. A worker's halt
// comes back to the orchestrator as the agent tool's result and the episode
// goes on; the orchestrator's own halt ends the episode as a timeout.
func TestAgentWallTime(t *testing.T) {
	const wall = 3 * time.Second
	stuck := fakeopenai.Reply{Content: "thinking", Delay: time.Minute}
	tests := []struct {
		name    string
		worker  fakeopenai.Reply // every reply to the worker
		orch    fakeopenai.Reply // the orchestrator's reply after the worker's report
		halted  string           // the agent halted by its wall time
		success bool
	}{
		{"worker", stuck, fakeopenai.Reply{}, "worker-1", true},
		{"orchestrator", fakeopenai.Reply{Content: "done"}, stuck, "orchestrator", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := func(r *fakeopenai.Request) fakeopenai.Reply {
				if !r.HasTool("agent") {
					return tt.worker
				}
				if r.Turn() == 0 {
					return calls(fakeopenai.Call{Name: "agent", Arguments: `{"description":"slow","prompt":"think","subagent_type":"general-purpose"}`})
				}
				if tt.orch.Delay > 0 {
					return tt.orch
				}
				res, _ := r.LastTool()
				return fakeopenai.Reply{Content: "worker said: " + res}
			}
			d, _ := fakeModel(t, p, nil)
			spec := testTask(t, 30*time.Second) // ample, yet short if the agent clock fails
			spec.Limits.AgentWallTime = wall
			st, dir := runEpisode(t, d, spec, "")
			reason := tt.halted + " ran past its wall time " + wall.String()
			if tt.success {
				if !st.Success {
					t.Fatalf("episode failed (%s: %s); a worker's wall time must not end it", st.Failure, st.Reason)
				}
				if !strings.Contains(st.Final, reason) {
					t.Errorf("orchestrator's view of the worker = %q, want it to contain %q", st.Final, reason)
				}
			} else if st.Success || st.Failure != FailTimeout || !strings.Contains(st.Reason, reason) {
				t.Fatalf("status = %v/%s (%s), want a timeout naming %q", st.Success, st.Failure, st.Reason, reason)
			}
			var fin *ledger.Record
			for _, r := range ledgerRecords(t, dir) {
				if r.Tool == ledger.ToolAgentFinish && r.Agent == tt.halted {
					fin = &r
				}
			}
			if fin == nil {
				t.Fatalf("no agent_finish record for %s", tt.halted)
			}
			var detail struct{ Stop string }
			if err := json.Unmarshal(fin.Detail, &detail); err != nil {
				t.Fatal(err)
			}
			if fin.OK || detail.Stop != agent.StopWall || !strings.Contains(fin.Error, reason) {
				t.Errorf("agent_finish of %s: ok %v, stop %q, error %q; want a %s stop naming %q",
					tt.halted, fin.OK, detail.Stop, fin.Error, agent.StopWall, reason)
			}
		})
	}
}
