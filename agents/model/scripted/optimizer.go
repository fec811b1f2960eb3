package scripted

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/mass-dev/mass/agents/model/fakeopenai"
)

var missingRE = regexp.MustCompile(`missing ([\w/-]+(?:\.[\w-]+)*(?:, [\w/-]+(?:\.[\w-]+)*)*)`)

// Sections of the optimizer prompt (the reference's layout, cycle/search).
const (
	bestSection    = "# Previous best multi agent design"
	currentSection = "# Current multi agent design"
	saveSection    = "# Save rules"
	historyStart   = "3. Pairwise history"
	historyEnd     = "3b. Pairwise history delta checklist"
	rationaleMark  = "Rationale (verbatim excerpt): "
	designTextRule = "Return only the full replacement multi-agent design block as plain text."
)

// system is the content of the request's system message.
func system(r *fakeopenai.Request) string {
	for _, m := range r.Messages {
		if m.Role == "system" {
			return m.Content
		}
	}
	return ""
}

// optimize answers an optimizer prompt: it takes the previous best design
// when the prompt shows one, else the current design, and responds to the
// latest rationale — an agent whose contract produces a deliverable the
// evaluator found missing, else a checker with one more named check and a
// hop back to the first agent on failure. Asked for design text, it
// answers with the design alone.
func optimize(r *fakeopenai.Request) fakeopenai.Reply {
	p := r.FirstUser()
	base := workflowAgents(section(p, bestSection, saveSection))
	if base == nil {
		base = workflowAgents(section(p, currentSection, saveSection))
	}
	hist := section(p, historyStart, historyEnd)
	rationale := ""
	if i := strings.LastIndex(hist, rationaleMark); i >= 0 {
		rationale, _, _ = strings.Cut(hist[i+len(rationaleMark):], "\n")
	}
	n := len(base) + 1
	first := "the first agent"
	if len(base) > 0 {
		first = base[0].AgentID
	}
	add := teamAgent{AgentID: fmt.Sprintf("checker-%d", n), Role: "Contract checker",
		Instruction: fmt.Sprintf("Run after %s. Contract: check %d — re-derive one reported number from the inputs and write the result to /workspace/dryrun/checks/checker-%d.md as 'Check: ...: pass|fail'. Hop: on fail, send the artifact back to %s with the narrowed fix.", first, n, n, first)}
	change := "added a contract checker with one more named check and a failure hop"
	if m := missingRE.FindStringSubmatch(rationale); m != nil {
		miss := strings.TrimSpace(m[1])
		add = teamAgent{AgentID: fmt.Sprintf("deliverer-%d", n), Role: "Deliverable owner",
			Instruction: fmt.Sprintf("Contract: produce and verify %s at its exact path under /workspace; write the check to /workspace/dryrun/checks/deliverer-%d.md. Hop: runs after %s; a failed check goes back to it.", miss, n, first)}
		change = "added an owner for the missing deliverable " + miss
	}
	agents := append(append([]teamAgent(nil), base...), add)
	arr, _ := json.MarshalIndent(agents, "", "  ")
	if strings.Contains(system(r), designTextRule) {
		return fakeopenai.Reply{Reasoning: Label + " Extend the design; answer with the design text.", Content: workflowHeader + "\n" + string(arr)}
	}
	out, _ := json.Marshal(map[string]any{
		"improved_multi_agent_design": workflowHeader + "\n" + string(arr),
		"changes_from_previous":       []string{Label + " " + change},
		"why_it_should_improve":       Label + " the evaluator weighs verified contracts; the latest rationale was: " + truncate(rationale, 300),
		"evidence_used":               []string{Label + " latest pairwise rationale"},
		"expected_impact":             Label + " one more passing contract check in the workspace",
		"verification_checks":         []string{"/workspace/dryrun/checks/" + add.AgentID + ".md exists"},
	})
	return fakeopenai.Reply{Reasoning: Label + " Extend the champion design in response to the rationale.", Content: string(out)}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
