package audit

import (
	"encoding/json"
	"sort"

	"github.com/mass-dev/mass/agents/ledger"
)

// finishDetail is the part of agent_finish's detail the audit reads.
type finishDetail struct {
	Changed *[]string `json:"changed"`
	Stop    string    `json:"stop"`
}

// shellChanges attributes changed paths that no ledgered write explains.
func (a *auditor) shellChanges() {
	recs := a.in.Records
	windowStart := 0 // index of the first record after the previous manifest
	var prevManifest map[string]string
	for i, r := range recs {
		if r.Tool != ledger.ToolAgentFinish {
			continue
		}
		var d finishDetail
		if json.Unmarshal(r.Detail, &d) != nil || d.Changed == nil {
			continue // no manifest taken: the next finish's window covers this one
		}
		window := recs[windowStart:i]
		manifest := a.in.Manifests[r.Agent]
		lastWrite := map[string]ledger.Record{}
		shellAgents := []string{}
		ranShell := map[string]bool{}
		for _, w := range window {
			if isWrite(w) {
				lastWrite[CleanPath(w.Path)] = w
			}
			if w.Tool == toolShell && w.OK && !ranShell[w.Agent] {
				ranShell[w.Agent] = true
				shellAgents = append(shellAgents, w.Agent)
			}
		}
		who := ""
		switch {
		case len(shellAgents) == 1:
			who = shellAgents[0]
		case ranShell[r.Agent]:
			who = r.Agent
		case len(shellAgents) > 1:
			who = shellAgents[0]
		}
		changed := append([]string{}, *d.Changed...)
		sort.Strings(changed)
		seen := map[string]bool{}
		for _, raw := range changed {
			p := CleanPath(raw)
			if p == "" || seen[p] {
				continue
			}
			seen[p] = true
			sum, inManifest := manifest[p]
			w, written := lastWrite[p]
			if written && (manifest == nil || (inManifest && w.SHA256After == sum)) {
				continue
			}
			change := "changed"
			switch {
			case manifest != nil && !inManifest:
				change = "deleted"
			case manifest != nil && prevManifest != nil:
				if _, ok := prevManifest[p]; ok {
					change = "modified"
				} else {
					change = "created"
				}
			}
			a.rep.ShellChanges = append(a.rep.ShellChanges, ShellChange{Path: p, Change: change, Agent: who, FinishSeq: r.Seq})
		}
		windowStart, prevManifest = i+1, manifest
	}
}

// table fills the per-agent rows.
func (a *auditor) table() {
	first := map[string]ledger.Record{}
	last := map[string]ledger.Record{}
	for _, r := range a.in.Records {
		ai := a.agent(r.Agent)
		if _, ok := first[r.Agent]; !ok {
			first[r.Agent] = r
		}
		last[r.Agent] = r
		switch r.Tool {
		case ledger.ToolAgentStart, ledger.ToolProtectedWriteDenied, ledger.ToolLoopHalt:
		case ledger.ToolAgentFinish:
			ai.row.Finished = true
			var d finishDetail
			if json.Unmarshal(r.Detail, &d) == nil {
				ai.row.Stop = d.Stop
			}
		default:
			ai.row.ToolCalls++
			if !r.OK {
				ai.row.FailedToolCalls++
			}
			if r.Tool == toolShell {
				ai.row.ShellCommands++
			}
			if isWrite(r) {
				ai.written[CleanPath(r.Path)] = true
			}
		}
	}
	for _, q := range a.in.Requests {
		id := q.Agent
		if id == "" {
			id = q.Thread
		}
		ai := a.agent(id)
		if q.Status == "error" {
			ai.row.ModelErrors++
			continue
		}
		if q.Purpose == "" {
			ai.row.Turns++
		}
		ai.row.PromptTokens += q.Response.Usage.PromptTokens
		ai.row.CompletionTokens += q.Response.Usage.CompletionTokens
	}
	for _, c := range a.rep.ShellChanges {
		if ai := a.agents[c.Agent]; ai != nil {
			ai.row.ShellChanged++
		}
	}
	for _, id := range a.sortedAgents() {
		ai := a.agents[id]
		ai.row.Role, ai.row.Parent, ai.row.FilesWritten = ai.role, ai.parent, len(ai.written)
		if f, ok := first[id]; ok {
			end := last[id]
			ai.row.WallMS = float64(end.TS.Sub(f.TS).Microseconds()) / 1000
		}
		a.rep.Agents = append(a.rep.Agents, ai.row)
	}
}
