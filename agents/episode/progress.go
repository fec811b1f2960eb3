package episode

import (
	"fmt"
	"sync"

	"github.com/mass-dev/mass/agents/agent"
)

// Progress is an episode's live state.
type Progress struct {
	Stage            string
	Agents           int
	Running          []string
	Turns            int
	ToolCalls        int
	PromptTokens     int64
	CompletionTokens int64
	Last             string // the latest step in words
	LastCalls        []ToolCall
}

// progress aggregates agent events; safe for concurrent use.
type progress struct {
	mu  sync.Mutex
	p   Progress
	out func(Progress)
}

func newProgress(out func(Progress)) *progress { return &progress{out: out} }

func (g *progress) emit() {
	if g.out == nil {
		return
	}
	p := g.p
	p.Running = append([]string(nil), g.p.Running...)
	p.LastCalls = append([]ToolCall(nil), g.p.LastCalls...)
	g.out(p)
}

func (g *progress) stage(s string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.p.Stage = s
	g.emit()
}

// stageNote enters stage s with last as the latest step.
func (g *progress) stageNote(s, last string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.p.Stage, g.p.Last = s, last
	g.emit()
}

func (g *progress) agentStarted(id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.p.Agents++
	g.p.Running = append(g.p.Running, id)
	g.p.Last = id + " started"
	g.emit()
}

func (g *progress) agentFinished(id string, r agent.Result) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, a := range g.p.Running {
		if a == id {
			g.p.Running = append(g.p.Running[:i], g.p.Running[i+1:]...)
			break
		}
	}
	g.p.Last = fmt.Sprintf("%s finished (%s, %d turns, %d tool calls)", id, r.Stop, r.Turns, r.ToolCalls)
	g.emit()
}

func (g *progress) observe(ev agent.Event) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch ev.Type {
	case "turn":
		g.p.Turns++
		g.p.PromptTokens += int64(ev.PromptTokens)
		g.p.CompletionTokens += int64(ev.CompletionTokens)
		g.p.Last = fmt.Sprintf("%s: model turn (%d+%d tokens)", ev.Agent, ev.PromptTokens, ev.CompletionTokens)
	case "tool":
		g.p.ToolCalls++
		g.p.LastCalls = append(g.p.LastCalls, ToolCall{Agent: ev.Agent, Tool: ev.Tool, ArgsSummary: ev.ArgsSummary, OK: ev.OK})
		if n := len(g.p.LastCalls); n > lastCalls {
			g.p.LastCalls = g.p.LastCalls[n-lastCalls:]
		}
		ok := "ok"
		if !ev.OK {
			ok = "error"
		}
		g.p.Last = fmt.Sprintf("%s: %s %s", ev.Agent, ev.Tool, ok)
	}
	g.emit()
}

func (g *progress) snapshot() Progress {
	g.mu.Lock()
	defer g.mu.Unlock()
	p := g.p
	p.LastCalls = append([]ToolCall(nil), g.p.LastCalls...)
	return p
}
