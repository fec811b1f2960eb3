package refimport

import (
	"fmt"
	"sort"
	"strings"

	"github.com/mass-dev/mass/taskspec"
)

// split maps the reference's lists onto a mass split, with a note when the
// mapping is not one to one.
func split(s *Splits, q int) (string, []string) {
	switch {
	case contains(s.Test, q):
		return taskspec.SplitTest, nil
	case s.Excluded[q] != "" || hasKey(s.Excluded, q):
		return taskspec.SplitExcluded, []string{fmt.Sprintf("excluded from teacher collection in the reference (%q); "+
			"split: excluded keeps it out of mass's generations and held-out evaluations alike, while searches and evaluations can still name it", s.Excluded[q])}
	case len(s.SFTTrain) > 0 && contains(s.DesignatedTrain, q) && !contains(s.SFTTrain, q):
		return taskspec.SplitExcluded, []string{"designated for training but not in sft_train: imported as split: excluded"}
	case contains(s.DesignatedTrain, q) || contains(s.SFTTrain, q):
		return taskspec.SplitTrain, nil
	}
	return taskspec.SplitTrain, []string{"in no split list of splits.json: imported as split: train"}
}

func hasKey(m map[int]string, q int) bool {
	_, ok := m[q]
	return ok
}

// taskNotes are the per-task differences from the reference.
func taskNotes(t task) []string {
	notes := []string{"no grader: the task is judged only (searches and evaluations compare it by judge; " +
		"eligibility for training needs no grader pass, and the deliverables stay in the prompt text, not required_outputs)"}
	if t.rep.Domain == "" {
		notes = append(notes, fmt.Sprintf("query %d is outside the domain bands (1-99, 200-299, 300-399): no domain", t.rep.Query))
	}
	before := strings.TrimRight(t.initial.Before, " \t\r\n")
	if !strings.HasPrefix(t.prompt, before) {
		notes = append(notes, "the initial file's text before the design is not the bare query's start; the bare query is the prompt")
	}
	if after := strings.TrimSpace(t.initial.After); after != "" {
		tail := "text"
		if strings.Contains(after, LogMarker) {
			tail = "text (with its team-log request, \"" + LogMarker + "\")"
		}
		notes = append(notes, fmt.Sprintf("the initial file has %d bytes of %s after the design; mass's teacher prompt is task + design + directive, "+
			"so it is reported (after_design) and not sent", len(t.initial.After), tail))
	}
	return notes
}

// setNotes are the set-wide differences.
func setNotes(s *Splits, directive bool) []string {
	notes := []string{
		"limits: the reference's task files set none; every task gets the importer's episode_wall_time, agent_turns, cpus and memory_bytes",
		"network: the reference's programs download public data and install packages with uv; an imported task has no network until its spec lists domains (network.allow)",
	}
	if directive {
		notes = append(notes, "teacher directive: the reference appends it to the retained task-workflow prompt in teacher collection; "+
			"mass sends it verbatim in place of its own execution directive (directive: "+DirectiveFile+")")
	} else {
		notes = append(notes, "no "+directiveName+": mass's own execution directive applies")
	}
	if len(s.Domains) > 0 {
		names := make([]string, 0, len(s.Domains))
		for n := range s.Domains {
			names = append(names, n)
		}
		sort.Strings(names)
		notes = append(notes, "splits.json domains ("+strings.Join(names, ", ")+") are not used: domain comes from the query-number bands")
	}
	if len(s.Ignored) > 0 {
		notes = append(notes, "splits.json keys with no meaning here: "+strings.Join(s.Ignored, ", "))
	}
	return notes
}
