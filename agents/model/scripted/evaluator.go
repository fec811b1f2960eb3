package scripted

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/mass-dev/mass/agents/model/fakeopenai"
)

// Markers of the role prompts (cycle/judge.Marker, cycle/search.OptimizerMarker).
const (
	EvaluatorMarker = "MASS EVALUATOR:"
	// OptimizerMarker opens the optimizer's system prompt (the reference's).
	OptimizerMarker = "You are a principal prompt engineer for autonomous coding agents."
)

// evidence is what the scripted evaluator reads from one side's bundle.
type evidence struct {
	delivered, missing []string
	checks, files      int
	secondary          int // passing secondary checks (seed quality), also in checks
}

var (
	okLine    = regexp.MustCompile(`(?m)^- \[x\] (\S+?):`)
	missLine  = regexp.MustCompile(`(?m)^- \[ \] (\S+?):`)
	checkLine = regexp.MustCompile(`(?m)^Check: .*: pass$`)
	scndLine  = regexp.MustCompile(`(?m)^Check: \S+ secondary check .*: pass$`)
	fileLine  = regexp.MustCompile(`(?m)^\S.* \(\d+ bytes\)$`)
)

func readEvidence(s string) evidence {
	var e evidence
	for _, m := range okLine.FindAllStringSubmatch(s, -1) {
		e.delivered = append(e.delivered, m[1])
	}
	for _, m := range missLine.FindAllStringSubmatch(s, -1) {
		e.missing = append(e.missing, m[1])
	}
	e.secondary = len(scndLine.FindAllString(s, -1))
	e.checks = len(checkLine.FindAllString(s, -1)) - e.secondary
	e.files = len(fileLine.FindAllString(s, -1))
	return e
}

func (e evidence) score() int {
	return 10*len(e.delivered) - 10*len(e.missing) + e.checks + min(e.files, 20)/5
}

func (e evidence) String() string {
	s := fmt.Sprintf("%d deliverables present, %d passing checks (+%d secondary), %d files", len(e.delivered), e.checks, e.secondary, e.files)
	if len(e.missing) > 0 {
		s += ", missing " + strings.Join(e.missing, ", ")
	}
	return s
}

// section is the text between two headings of the evaluator prompt.
func section(s, from, to string) string {
	_, rest, ok := strings.Cut(s, from)
	if !ok {
		return ""
	}
	body, _, _ := strings.Cut(rest, to)
	return body
}

// evaluate decides from the evidence bundles in the prompt only: present
// deliverables weigh most, then passing contract checks, then files; the
// secondary checks decide between workspaces equal on all of those.
func evaluate(r *fakeopenai.Request) fakeopenai.Reply {
	p := r.FirstUser()
	a := readEvidence(section(p, "## Workspace A", "## Workspace B"))
	b := readEvidence(section(p, "## Workspace B", "## Rubric"))
	winner, why := decide(a, b)
	rat := fmt.Sprintf("%s A: %s. B: %s. %s.", Label, a, b, why)
	out, _ := json.Marshal(map[string]string{"winner": winner, "rationale": rat})
	return fakeopenai.Reply{Reasoning: Label + " Compare the deliverables preflight, the checks and the file trees.", Content: string(out)}
}

// decide compares two sides' evidence: the score first, then the
// secondary checks; equal on both is a tie.
func decide(a, b evidence) (winner, why string) {
	winner, why = "tie", "both workspaces show comparable evidence"
	switch sa, sb := a.score(), b.score(); {
	case sa > sb:
		winner, why = "A", "A is more complete"
	case sb > sa:
		winner, why = "B", "B is more complete"
	case a.secondary > b.secondary:
		winner, why = "A", "equally complete, A ran more secondary checks"
	case b.secondary > a.secondary:
		winner, why = "B", "equally complete, B ran more secondary checks"
	}
	return winner, why
}
