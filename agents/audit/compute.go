package audit

import (
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/mass-dev/mass/agents/guard"
	"github.com/mass-dev/mass/agents/ledger"
	"github.com/mass-dev/mass/sandbox"
)

// Workspace is where relative paths are taken from.
const Workspace = sandbox.WorkspaceMount

// Tool names the audit looks for (qwen-code's).
const (
	toolAgent = "agent"
	toolRead  = "read_file"
	toolWrite = "write_file"
	toolEdit  = "edit"
	toolShell = "run_shell_command"
)

// Roles.
const (
	RoleOrchestrator = "orchestrator"
	RoleWorker       = "worker"
	RoleUnknown      = "unknown"
)

// CleanPath makes p absolute under /workspace and cleans it.
func CleanPath(p string) string {
	if p == "" {
		return ""
	}
	if !path.IsAbs(p) {
		p = path.Join(Workspace, p)
	}
	return path.Clean(p)
}

// agentInfo is what the audit learns about one agent from the ledger.
type agentInfo struct {
	role, parent string
	startSeq     int64
	finishSeqs   []int64 // every agent_finish, in order
	row          AgentRow
	written      map[string]bool
}

type auditor struct {
	in     Inputs
	agents map[string]*agentInfo
	order  []string // agents in order of first appearance
	rep    *Report
}

// Compute derives the audit from in by the definitions in the package doc.
// It reads only in and never fails: records it cannot interpret are skipped.
func Compute(in Inputs) *Report {
	a := &auditor{in: in, agents: map[string]*agentInfo{}, rep: &Report{
		Episode: in.Episode, Model: in.Model, DryRun: in.DryRun, Ledger: in.Ledger,
		Sandbox: Sandbox{Runtime: in.SandboxRuntime, Image: in.SandboxImage,
			ProtectedPaths: nonNil(in.ProtectedPaths), HiddenPaths: nonNil(in.HiddenPaths)},
		Agents: []AgentRow{}, Delegations: []Delegation{}, Handoffs: []Handoff{}, Revisions: []Revision{},
		ShellChanges: []ShellChange{}, Violations: []Violation{}, Halts: []LoopHalt{},
	}}
	a.collectAgents()
	a.delegations()
	a.handoffs()
	a.revisions()
	a.guards()
	a.halts()
	a.shellChanges()
	a.table()
	r := a.rep
	r.Delegation, r.CodeHandoff = len(r.Delegations), len(r.Handoffs)
	for _, v := range r.Revisions {
		switch v.Role {
		case RoleWorker:
			r.WorkerRevision++
		case RoleOrchestrator:
			r.OrchestratorRevision++
		}
	}
	r.ProtectedPathViolations, r.LoopHalts = len(r.Violations), len(r.Halts)
	r.ProtectedPathAttempts, r.HiddenPathAttempts = len(r.Guards.Attempts), len(r.Guards.HiddenAttempts)
	r.ShadowCopies = len(r.Guards.ShadowCopies)
	r.ShellChangedFiles = len(r.ShellChanges)
	r.Egress = egressReport(in.Egress)
	return r
}

func (a *auditor) agent(id string) *agentInfo {
	ai := a.agents[id]
	if ai == nil {
		ai = &agentInfo{row: AgentRow{Agent: id}, written: map[string]bool{}}
		a.agents[id] = ai
		a.order = append(a.order, id)
	}
	return ai
}

func (a *auditor) collectAgents() {
	for _, r := range a.in.Records {
		ai := a.agent(r.Agent)
		switch r.Tool {
		case ledger.ToolAgentStart:
			var d struct{ Role, Parent string }
			_ = json.Unmarshal(r.Detail, &d)
			if ai.startSeq == 0 {
				ai.role, ai.parent, ai.startSeq = d.Role, d.Parent, r.Seq
			}
		case ledger.ToolAgentFinish:
			ai.finishSeqs = append(ai.finishSeqs, r.Seq)
		}
	}
	for _, q := range a.in.Requests {
		id := q.Agent
		if id == "" {
			id = q.Thread
		}
		ai := a.agent(id)
		if ai.role == "" {
			ai.role, ai.parent = q.Role, q.Parent
		}
	}
	for _, ai := range a.agents {
		if ai.role == "" {
			ai.role = RoleUnknown
		}
	}
}

func (a *auditor) role(id string) string {
	if ai := a.agents[id]; ai != nil {
		return ai.role
	}
	return RoleUnknown
}

// finishedBefore reports whether agent id has an agent_finish before seq.
func (a *auditor) finishedBefore(id string, seq int64) (int64, bool) {
	ai := a.agents[id]
	if ai == nil || len(ai.finishSeqs) == 0 || ai.finishSeqs[0] >= seq {
		return 0, false
	}
	return ai.finishSeqs[0], true
}

func isWrite(r ledger.Record) bool {
	return r.OK && (r.Tool == toolWrite || r.Tool == toolEdit)
}

func (a *auditor) delegations() {
	for _, r := range a.in.Records {
		if r.Tool == toolAgent && r.OK {
			var d struct{ Subagent string }
			_ = json.Unmarshal(r.Detail, &d)
			a.rep.Delegations = append(a.rep.Delegations, Delegation{Seq: r.Seq, Agent: r.Agent, Subagent: d.Subagent})
		}
	}
}

func (a *auditor) handoffs() {
	lastWrite := map[string]ledger.Record{} // path -> last successful write/edit by a worker so far
	counted := map[[2]string]bool{}         // (path, reader)
	for _, r := range a.in.Records {
		p := CleanPath(r.Path)
		if isWrite(r) && a.role(r.Agent) == RoleWorker {
			lastWrite[p] = r
			continue
		}
		if r.Tool != toolRead || !r.OK || !strings.HasSuffix(p, ".py") || a.role(r.Agent) != RoleWorker {
			continue
		}
		w, ok := lastWrite[p]
		if !ok || w.Agent == r.Agent || counted[[2]string{p, r.Agent}] {
			continue
		}
		fin, ok := a.finishedBefore(w.Agent, r.Seq)
		if !ok {
			continue
		}
		counted[[2]string{p, r.Agent}] = true
		a.rep.Handoffs = append(a.rep.Handoffs, Handoff{Path: p, Writer: w.Agent, Reader: r.Agent,
			WriteSeq: w.Seq, FinishSeq: fin, ReadSeq: r.Seq})
	}
}

func (a *auditor) revisions() {
	for _, r := range a.in.Records {
		if !isWrite(r) {
			continue
		}
		existed := r.SHA256Before != ""
		if r.Tool == toolEdit && !existed {
			var d struct{ Created bool }
			_ = json.Unmarshal(r.Detail, &d)
			existed = !d.Created
		}
		if !existed || (r.SHA256Before != "" && r.SHA256Before == r.SHA256After) {
			continue
		}
		role := a.role(r.Agent)
		if role != RoleWorker && role != RoleOrchestrator {
			continue
		}
		a.rep.Revisions = append(a.rep.Revisions, Revision{Seq: r.Seq, Agent: r.Agent, Role: role,
			Tool: r.Tool, Path: CleanPath(r.Path)})
	}
}

// guards fills the guards section: attempts and commands from the ledger,
// the integrity check and shadow copies as recorded in guards.json. Each
// integrity change is one violation.
func (a *auditor) guards() {
	g := &Guards{Grade: a.in.Grade, GuardsRecorded: a.in.Guards != nil, Integrity: guard.Integrity{Changes: []guard.Change{}},
		ShadowCopies: []guard.Shadow{}}
	g.Attempts, g.HiddenAttempts, g.Commands = guard.Attempts(a.in.Records, a.in.ProtectedPaths, a.in.HiddenPaths)
	if rec := a.in.Guards; rec != nil {
		g.Integrity = rec.Integrity
		if g.Integrity.Changes == nil {
			g.Integrity.Changes = []guard.Change{}
		}
		if rec.ShadowCopies != nil {
			g.ShadowCopies = rec.ShadowCopies
		}
	}
	for _, c := range g.Integrity.Changes {
		a.rep.Violations = append(a.rep.Violations, Violation{Tool: "integrity", Path: c.Path,
			Error: fmt.Sprintf("%s (sha256 %.12s -> %.12s)", c.Change, c.Before, c.After)})
	}
	a.rep.Guards = g
}

func (a *auditor) halts() {
	for _, r := range a.in.Records {
		if r.Tool == ledger.ToolLoopHalt {
			var d struct{ Rule string }
			_ = json.Unmarshal(r.Detail, &d)
			a.rep.Halts = append(a.rep.Halts, LoopHalt{Seq: r.Seq, Agent: r.Agent, Rule: d.Rule, Error: r.Error})
		}
	}
}

// sortedAgents returns agent ids with the orchestrator first, then by first
// appearance.
func (a *auditor) sortedAgents() []string {
	ids := append([]string{}, a.order...)
	sort.SliceStable(ids, func(i, j int) bool {
		return a.role(ids[i]) == RoleOrchestrator && a.role(ids[j]) != RoleOrchestrator
	})
	return ids
}

// nonNil keeps an empty list a JSON array.
func nonNil(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}
