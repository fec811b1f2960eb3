// Package eligibility decides whether a finished episode may become
// training data, and why not. It is the one predicate both `data build`
// and the generation job apply before ranking; it reads episodes through
// episodefmt and imports nothing else of mass.
package eligibility

import "fmt"

// Episode is what the predicate looks at, read from run_status.json.
type Episode struct {
	ID string
	// OutputsPresent: every required output glob matched an exported file.
	OutputsPresent bool
	// GraderDeclared: the task has a grader; GraderPassed: its grade passed.
	GraderDeclared, GraderPassed bool
	// Violations are protected-path changes that got through (the integrity
	// check); ShadowCopies are edited copies of protected files.
	Violations, ShadowCopies int
	// DryRun: the episode ran massd's scripted dry-run model.
	DryRun bool
	// Completed: the episode ended with exit "completed".
	Completed bool
	// GuardsChecked: the episode's record carries the guard counts; older
	// records without them cannot show they are clean.
	GuardsChecked bool
}

// Dataset describes the dataset an episode would train.
type Dataset struct {
	// DryRun labels a dataset built for the scripted demo cycle: only it
	// takes dry-run episodes, and it takes only those.
	DryRun bool
}

// Check returns "" when e may train d, else the reason it may not.
func Check(e Episode, d Dataset) string {
	switch {
	case e.DryRun && !d.DryRun:
		return "dry-run episode (scripted model); only a dataset labelled dry-run takes it"
	case !e.DryRun && d.DryRun:
		return "real-model episode; a dry-run dataset takes only dry-run episodes"
	case !e.Completed:
		return "the episode did not complete"
	case !e.OutputsPresent:
		return "a required output is missing"
	case e.GraderDeclared && !e.GraderPassed:
		return "the task's grader did not pass"
	case !e.GuardsChecked:
		return "the record has no guard check (recorded before graders and integrity checks)"
	case e.Violations > 0:
		return fmt.Sprintf("%d protected-path violation(s): protected files changed", e.Violations)
	case e.ShadowCopies > 0:
		return fmt.Sprintf("%d shadow cop(ies) of protected files", e.ShadowCopies)
	}
	return ""
}
