package scripted

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/mass-dev/mass/agents/model/fakeopenai"
)

// AgentEvaluatorMarker starts an agent-mode evaluator prompt (cycle/judge.AgentMarker).
const AgentEvaluatorMarker = "MASS EVALUATOR (agent mode):"

var safePattern = regexp.MustCompile(`^[A-Za-z0-9_.*/-]{1,200}$`)

// agentEvaluate is the judge agent: it inspects both mounted workspaces
// with one shell command (preflight of the required outputs, file list,
// passing checks) and then answers from that tool output only.
func agentEvaluate(r *fakeopenai.Request) fakeopenai.Reply {
	if r.Turn() == 0 {
		return call(Label+" Inspect both workspaces.", "run_shell_command", map[string]any{
			"command": inspectScript(required(r.FirstUser())), "description": "list deliverables, files and checks of A and B"})
	}
	out, _ := r.LastTool()
	a := readEvidence(section(out, "## Workspace A", "## Workspace B"))
	b := readEvidence(section(out, "## Workspace B", "## Rubric"))
	winner, why := decide(a, b)
	v, _ := json.Marshal(map[string]string{"winner": winner, "rationale": fmt.Sprintf("%s (agent mode) A: %s. B: %s. %s.", Label, a, b, why)})
	return fakeopenai.Reply{Reasoning: Label + " Decide from what the inspection printed.", Content: string(v)}
}

// required lists the safe patterns of the prompt's "## Required outputs".
func required(prompt string) []string {
	var out []string
	for _, line := range strings.Split(section(prompt, "## Required outputs", "## Rubric"), "\n") {
		if p, ok := strings.CutPrefix(strings.TrimSpace(line), "- "); ok && safePattern.MatchString(p) {
			out = append(out, p)
		}
	}
	return out
}

func inspectScript(req []string) string {
	var b strings.Builder
	b.WriteString("for S in A B; do d=/workspace/judge/$S; echo \"## Workspace $S\"; ")
	for _, p := range req {
		fmt.Fprintf(&b, "if ls -d $d/%s >/dev/null 2>&1; then echo '- [x] %s: found'; else echo '- [ ] %s: missing'; fi; ", p, p, p)
	}
	b.WriteString("find $d -type f | while read f; do echo \"${f#$d/} ($(wc -c < \"$f\") bytes)\"; done; ")
	b.WriteString("cat $d/dryrun/checks/*.md 2>/dev/null | grep '^Check: .*: pass$'; done; echo '## Rubric'")
	return b.String()
}
