package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/taskspec"
)

// printTask writes every field of a task's spec for a person: unset values
// say what applies instead, sizes and durations in their units.
func printTask(w io.Writer, t api.Task) {
	s := t.Spec
	split := s.Split
	if split == "" {
		split = "train (default)"
	}
	field := func(name, value string) { fmt.Fprintf(w, "%-12s %s\n", name+":", value) }
	field("id", t.ID)
	field("added", fmtTime(t.Created))
	field("dir", t.Dir)
	field("split", split)
	field("domain", orNone(s.Domain, "none (the evaluator's default persona)"))
	field("inputs", orNone(inputList(s.Inputs), "none"))
	field("hidden", orNone(inputList(s.HiddenPaths), "none (nothing is kept from the agents)"))
	field("outputs", orNone(strings.Join(s.RequiredOutputs, ", "), "none required"))
	field("protected", orNone(strings.Join(s.ProtectedPaths, ", "), "none"))
	l := s.Limits
	agentWall := "none (the episode clock only)"
	if l.AgentWallTime > 0 {
		agentWall = l.AgentWallTime.String()
	}
	field("limits", fmt.Sprintf("wall %v, agent wall %s, turns %d, tokens %d, cpus %g, memory %s",
		l.EpisodeWallTime, agentWall, l.AgentTurns, l.Tokens, l.CPUs, fmtBytes(l.MemoryBytes)))
	if g := s.Grader; g != nil {
		field("grader", fmt.Sprintf("%s (timeout %v)", g.Command, g.EffectiveTimeout()))
	} else {
		field("grader", "none (the task is judged only)")
	}
	if n := s.Network; n != nil {
		field("network", fmt.Sprintf("%s through the egress proxy, at most %s", strings.Join(n.Allow, ", "), fmtBytes(n.MaxBytes)))
	} else {
		field("network", "none")
	}
	field("workflow", orNone(s.Workflow, "none (the search starts from the bare task)"))
	fmt.Fprintf(w, "prompt:\n  %s\n", strings.ReplaceAll(strings.TrimSpace(s.Prompt), "\n", "\n  "))
}

func inputList(ins []taskspec.Input) string {
	var out []string
	for _, in := range ins {
		if in.Dest != "" {
			out = append(out, in.Path+" -> "+in.Dest)
		} else {
			out = append(out, in.Path)
		}
	}
	return strings.Join(out, ", ")
}

func orNone(s, none string) string {
	if s == "" {
		return none
	}
	return s
}

// fmtBytes is n in the largest binary unit that keeps it ≥ 1 ("2.0 GiB").
func fmtBytes(n int64) string {
	if n <= 0 {
		return "unset"
	}
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	f, u := float64(n)/unit, 0
	for f >= unit && u < 4 {
		f /= unit
		u++
	}
	return fmt.Sprintf("%.1f %ciB", f, "KMGTP"[u])
}
