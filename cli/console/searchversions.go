package console

import (
	"context"
	"encoding/json"

	"github.com/mass-dev/mass/cycle/search"
)

// MaxSlotsBytes caps the search's episodes record a page reads.
const MaxSlotsBytes = 4 << 20

// slotView is one finished episode of a search as its page shows it: the
// episode (linked), its outcome corrected by grade and deliverables, and
// what it delivered.
type slotView struct {
	search.VersionOutcome
	Outcome      Outcome
	Deliverables string // "present", "missing" or "" (not known)
	Grade        string // "passed", "failed" or "" (no grader, not known)
}

// searchSlots reads the search's episodes record: every finished slot by
// name ("reference", "v0", …) and the outcomes in slot order. A search
// without the record (none finished yet) has none.
func (c *Console) searchSlots(ctx context.Context, task, id string) (map[string]*slotView, []search.VersionOutcome) {
	text, _, err := c.readSearchText(ctx, task, id, search.EpisodesFile, MaxSlotsBytes)
	if err != nil {
		return map[string]*slotView{}, nil
	}
	var slots []search.Slot
	if json.Unmarshal([]byte(text), &slots) != nil {
		return map[string]*slotView{}, nil
	}
	outs := search.Outcomes(slots)
	m := make(map[string]*slotView, len(outs))
	for _, o := range outs {
		v := &slotView{VersionOutcome: o}
		v.Outcome = Outcome{Text: "unsuccessful", Class: "s-failed"}
		if o.Success {
			v.Outcome = Outcome{Text: "succeeded", Class: "s-succeeded"}
		}
		if e, err := c.cl.Episode(ctx, o.EpisodeID); err == nil {
			v.Outcome = episodeOutcome(e)
			fillFromSummary(&v.VersionOutcome, e.Summary)
		}
		v.Deliverables, v.Grade = yesNo(v.OutputsPresent, "present", "missing"), yesNo(v.GradePassed, "passed", "failed")
		m[o.Slot] = v
	}
	return m, outs
}

// fillFromSummary takes the grade from the episode's own summary (the
// search's records never hold it) and the deliverables for records written
// before the search kept them.
func fillFromSummary(o *search.VersionOutcome, raw json.RawMessage) {
	var s struct {
		OutputsPresent *bool `json:"outputs_present"`
		Grade          *struct {
			Passed bool `json:"passed"`
		} `json:"grade"`
	}
	if json.Unmarshal(raw, &s) != nil {
		return
	}
	if o.OutputsPresent == nil {
		o.OutputsPresent = s.OutputsPresent
	}
	if o.GradePassed == nil && s.Grade != nil {
		o.GradePassed = &s.Grade.Passed
	}
}

func yesNo(b *bool, yes, no string) string {
	switch {
	case b == nil:
		return ""
	case *b:
		return yes
	}
	return no
}
