package search

import "fmt"

// VersionOutcome is what one finished episode of a search delivered: the
// slot ("reference", "v0", "v3"), its episode, success and whether the
// required outputs exist. The search's records hold no grade (the
// optimizer must never see one): GradePassed is filled only by readers of
// the episode's own record, such as the console.
type VersionOutcome struct {
	Slot           string `json:"slot"`
	EpisodeID      string `json:"episode_id"`
	Success        bool   `json:"success"`
	DryRun         bool   `json:"dry_run,omitempty"`
	OutputsPresent *bool  `json:"outputs_present,omitempty"`
	GradePassed    *bool  `json:"grade_passed,omitempty"`
	Failure        string `json:"failure,omitempty"`
}

// Outcomes lists the slots that finished, in slot order (reference, v0, v1, …).
func Outcomes(slots []Slot) []VersionOutcome {
	out := []VersionOutcome{}
	for _, sl := range slots {
		r := sl.Result
		if r == nil {
			continue
		}
		out = append(out, VersionOutcome{Slot: sl.Name, EpisodeID: r.EpisodeID, Success: r.Success, DryRun: r.DryRun,
			OutputsPresent: r.OutputsPresent, Failure: r.Failure})
	}
	return out
}

// DeliverablesWarning is a warning when neither the reference's nor the
// champion's episode delivered: both lack the task's required outputs, or
// both have them and neither succeeded (the grader failed them, as it
// fails a dry run's labelled placeholders). A verdict between them
// compares two workspaces that do not solve the task, so "the champion
// beats the reference" says nothing of the task being solved. "" when
// either delivered or when it is not known.
func DeliverablesWarning(vs []VersionOutcome, champion int) string {
	var ref, champ *VersionOutcome
	for i := range vs {
		switch vs[i].Slot {
		case "reference":
			ref = &vs[i]
		case fmt.Sprintf("v%d", champion):
			champ = &vs[i]
		}
	}
	if ref == nil || champ == nil || ref.OutputsPresent == nil || champ.OutputsPresent == nil {
		return ""
	}
	switch {
	case !*ref.OutputsPresent && !*champ.OutputsPresent:
		return fmt.Sprintf("neither the reference nor the champion v%d has the task's required outputs: "+
			"their verdicts compare workspaces without deliverables, not solutions", champion)
	case !ref.Success && !champ.Success:
		return fmt.Sprintf("neither the reference nor the champion v%d succeeded (outputs graded and failed, or the team did not complete): "+
			"their verdicts compare two failed attempts, not solutions", champion)
	}
	return ""
}
