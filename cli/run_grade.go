package cli

import (
	"fmt"
	"io"
)

// outcomeLine words the episode's end without contradicting itself: a dry
// run says it is one, success means the outputs exist and the grader passed.
func outcomeLine(s RunSummary) string {
	out := s.Exit
	switch {
	case s.Success && s.DryRun:
		out += ", success (dry run: scripted policy)"
	case s.Success:
		out += ", success"
	case s.Failure != "":
		out += ", failure: " + s.Failure
	case s.DryRun:
		out += ", not a success (dry run: scripted policy)"
	default:
		out += ", not a success"
	}
	return out
}

// printGrade adds the grade and guard lines to the run summary.
func printGrade(w io.Writer, s RunSummary) {
	if g := s.Grade; g != nil {
		v := "failed"
		if g.Passed {
			v = "passed"
		}
		if g.Score != nil {
			v += fmt.Sprintf(", score %g", *g.Score)
		}
		if g.Reason != "" {
			v += ": " + g.Reason
		}
		fmt.Fprintf(w, "grade\t%s (%.1fs)\n", v, g.Duration)
	}
	if g := s.Guards; g != nil {
		fmt.Fprintf(w, "guards\t%d violations, %d attempts, %d shadow copies, %d hidden-path attempts\n",
			g.ProtectedPathViolations, g.ProtectedPathAttempts, g.ShadowCopies, g.HiddenPathAttempts)
	}
}
