package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/mass-dev/mass/agents/audit"
)

// printGuards writes the audit's guards section: the grade, the integrity
// check, each attempt, each shadow copy and every shell command.
func printGuards(w io.Writer, g *audit.Guards) {
	fmt.Fprintln(w, "\nguards (ground truth; never shown to a model)")
	switch gr := g.Grade; {
	case gr == nil:
		fmt.Fprintln(w, "  grade: no grader ran")
	default:
		verdict := "FAILED"
		if gr.Passed {
			verdict = "passed"
		}
		score := ""
		if gr.Score != nil {
			score = fmt.Sprintf(", score %g", *gr.Score)
		}
		fmt.Fprintf(w, "  grade: %s%s (exit %d, %.1fs)", verdict, score, gr.ExitCode, gr.Duration)
		if gr.Reason != "" {
			fmt.Fprintf(w, ": %s", gr.Reason)
		}
		fmt.Fprintln(w)
	}
	switch in := g.Integrity; {
	case !in.Checked:
		fmt.Fprintln(w, "  integrity: NOT CHECKED (no guards.json or no export)")
	case len(in.Changes) == 0:
		fmt.Fprintf(w, "  integrity: %d protected files unchanged\n", in.Files)
	default:
		fmt.Fprintf(w, "  integrity: %d of %d protected files CHANGED\n", len(in.Changes), in.Files)
		for _, c := range in.Changes {
			fmt.Fprintf(w, "    %s %s\n", c.Change, c.Path)
		}
	}
	for _, a := range g.Attempts {
		fmt.Fprintf(w, "  attempt: seq %d %s %s: %s -> %s\n", a.Seq, a.Agent, a.Path, oneLine(a.Command), a.Result)
	}
	for _, a := range g.HiddenAttempts {
		fmt.Fprintf(w, "  hidden-path attempt: seq %d %s %s: %s -> %s\n", a.Seq, a.Agent, a.Path, oneLine(a.Command), a.Result)
	}
	for _, s := range g.ShadowCopies {
		fmt.Fprintf(w, "  shadow copy: %s of %s (%s)\n", s.Path, s.Origin, strings.Join(s.Evidence, "; "))
		for _, c := range s.RanBy {
			fmt.Fprintf(w, "    named by seq %d %s: %s (exit %d)\n", c.Seq, c.Agent, oneLine(c.Command), c.ExitCode)
		}
	}
	fmt.Fprintf(w, "  shell commands: %d\n", len(g.Commands))
	for _, c := range g.Commands {
		fmt.Fprintf(w, "    seq %d %s exit %d: %s\n", c.Seq, c.Agent, c.ExitCode, oneLine(c.Command))
		if c.StderrTail != "" {
			fmt.Fprintf(w, "      stderr: %s\n", oneLine(c.StderrTail))
		}
	}
}

// printSandbox names where the agents ran and the task's path lists.
func printSandbox(w io.Writer, s audit.Sandbox) {
	fmt.Fprintf(w, "sandbox: runtime %s, image %s\n", orUnknown(s.Runtime, "not recorded"), orUnknown(s.Image, "the runtime's default"))
	fmt.Fprintf(w, "  protected paths: %s\n  hidden paths:    %s\n", orUnknown(strings.Join(s.ProtectedPaths, ", "), "none"), orUnknown(strings.Join(s.HiddenPaths, ", "), "none"))
}

func orUnknown(s, what string) string {
	if s == "" {
		return "(" + what + ")"
	}
	return s
}

// oneLine keeps a command on one line of the report.
func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", "⏎")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
