package agent

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mass-dev/mass/agents/ledger"
	"github.com/mass-dev/mass/agents/model"
	"github.com/mass-dev/mass/agents/model/fakeopenai"
	"github.com/mass-dev/mass/agents/record"
	"github.com/mass-dev/mass/agents/tools"
)

// setup returns a Config talking to a fake endpoint with policy p, writing a
// real recording and ledger. Its Env has no sandbox: these tests only make
// calls that fail before reaching one (unknown tools, bad arguments).
func setup(t *testing.T, p fakeopenai.Policy) (Config, string) {
	t.Helper()
	srv := fakeopenai.New(p)
	if err := srv.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	c, err := model.New(model.Config{Name: "fake", BaseURL: srv.URL(), Model: "m", Backoff: time.Millisecond, MaxRetries: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rec, err := record.Open(filepath.Join(dir, "api_requests.jsonl"), "ep-t")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rec.Close() })
	led, err := ledger.Create(filepath.Join(dir, "ledger.jsonl"), "ep-t")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { led.Close() })
	return Config{ID: "orchestrator", Role: record.RoleOrchestrator, Client: c, Tools: tools.Worker(),
		Env: &tools.Env{Agent: "orchestrator", Ledger: led}, Rec: rec, Ledger: led}, dir
}

// unknownTool calls a tool that does not exist, with fresh arguments each turn.
func unknownTool(r *fakeopenai.Request) fakeopenai.Reply {
	return fakeopenai.Reply{Content: "trying", Calls: []fakeopenai.Call{{Name: "nope", Arguments: fmt.Sprintf(`{"n":%d}`, r.Turn())}}}
}

func TestLimits(t *testing.T) {
	slow := func(r *fakeopenai.Request) fakeopenai.Reply {
		rep := unknownTool(r)
		rep.Delay = 5 * time.Second
		return rep
	}
	tests := []struct {
		name   string
		p      fakeopenai.Policy
		limits Limits
		stop   string
		turns  int
	}{
		{"turns", unknownTool, Limits{Turns: 4}, StopTurns, 4},
		{"tokens", unknownTool, Limits{Tokens: 60}, StopTokens, 3},
		{"wall time", slow, Limits{WallTime: 300 * time.Millisecond}, StopWall, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, dir := setup(t, tt.p)
			c.Limits = tt.limits
			res, err := Run(context.Background(), c, "sys", "go")
			if !errors.Is(err, ErrLimit) {
				t.Fatalf("err = %v, want ErrLimit", err)
			}
			if got, want := res.Stop, tt.stop; got != want {
				t.Errorf("stop = %s, want %s", got, want)
			}
			if got, want := res.Turns, tt.turns; got != want {
				t.Errorf("turns = %d, want %d", got, want)
			}
			recs, err := record.ReadFile(filepath.Join(dir, "api_requests.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			want := res.Turns
			if tt.stop == StopWall {
				// The call the clock cut is recorded too, as an error
				// without a reply (it was not a turn).
				want++
				if last := recs[len(recs)-1]; last.Status != record.StatusError || !strings.Contains(last.Error, "cut off in flight") || len(last.Request.Messages) == 0 {
					t.Errorf("cut-off call recorded as %+v, want an error with its request", last)
				}
			}
			if got := len(recs); got != want {
				t.Errorf("recorded calls = %d, want %d", got, want)
			}
		})
	}
}

func TestFinalAnswerAndToolErrors(t *testing.T) {
	c, dir := setup(t, func(r *fakeopenai.Request) fakeopenai.Reply {
		if r.Turn() == 0 {
			return unknownTool(r)
		}
		last, _ := r.LastTool()
		return fakeopenai.Reply{Content: "final: " + last}
	})
	var events []Event
	c.Observe = func(e Event) { events = append(events, e) }
	res, err := Run(context.Background(), c, "sys", "go")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Final, `final: Error: invalid tool call: unknown tool "nope"`; got != want {
		t.Errorf("final = %q, want %q", got, want)
	}
	if got, want := len(events), 3; got != want {
		t.Errorf("events = %d, want %d (turn, tool, turn)", got, want)
	}
	if got, want := len(res.Messages), 5; got != want {
		t.Errorf("messages = %d, want %d (system, user, assistant, tool, assistant)", got, want)
	}
	recs, err := record.ReadFile(filepath.Join(dir, "api_requests.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(recs), 2; got != want {
		t.Fatalf("recorded calls = %d, want %d", got, want)
	}
	if len(recs[1].Request.Messages) < 4 || len(recs[0].Response.ToolCalls) == 0 ||
		recs[1].Request.Messages[3].ToolCallID != recs[0].Response.ToolCalls[0].ID {
		t.Error("tool message does not answer the recorded tool call id")
	}
}

func TestEndpointErrorIsRecorded(t *testing.T) {
	c, dir := setup(t, func(*fakeopenai.Request) fakeopenai.Reply { return fakeopenai.Reply{Status: 500} })
	_, err := Run(context.Background(), c, "sys", "go")
	if !errors.Is(err, model.ErrEndpoint) {
		t.Fatalf("err = %v, want ErrEndpoint", err)
	}
	recs, err := record.ReadFile(filepath.Join(dir, "api_requests.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Status != record.StatusError || recs[0].Attempts != 2 {
		t.Errorf("recording = %+v, want one error record after 2 attempts", recs)
	}
}

// An agent's wall time is its own: the clock stops while a sub-agent runs
// and goes on, with what is left, when the sub-agent reports back.
func TestWallTimeStopsForSubAgents(t *testing.T) {
	const limit = 300 * time.Millisecond
	tests := []struct {
		name  string
		after fakeopenai.Reply // the reply to the call after the sub-agent's report
		stop  string
	}{
		{"finishes", fakeopenai.Reply{Content: "done"}, StopFinal},
		{"then runs out", fakeopenai.Reply{Content: "done", Delay: 5 * time.Second}, StopWall},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := setup(t, func(r *fakeopenai.Request) fakeopenai.Reply {
				if r.Turn() == 0 {
					return fakeopenai.Reply{Calls: []fakeopenai.Call{{Name: tools.Agent,
						Arguments: `{"description":"d","prompt":"p","subagent_type":"general-purpose"}`}}}
				}
				return tt.after
			})
			c.Tools = tools.Orchestrator()
			c.Env.Delegate = func(ctx context.Context, _, _, _ string) (string, string, error) {
				select {
				case <-time.After(3 * limit):
					return "report", "worker-1", nil
				case <-ctx.Done():
					return "", "worker-1", context.Cause(ctx)
				}
			}
			c.Limits = Limits{WallTime: limit}
			res, err := Run(context.Background(), c, "sys", "go")
			if got, want := res.Stop, tt.stop; got != want {
				t.Fatalf("stop = %s (%v), want %s", got, err, want)
			}
			if tt.stop == StopWall && !errors.Is(err, ErrLimit) {
				t.Errorf("err = %v, want ErrLimit", err)
			}
			if tt.stop == StopFinal && err != nil {
				t.Errorf("err = %v, want none", err)
			}
		})
	}
}
