package search

import (
	"fmt"
	"os"
	"path/filepath"
)

// ReplayResult is what `massctl search replay` prints.
type ReplayResult struct {
	RetainedVersion  *int `json:"retained_version"`
	BeatsReference   bool `json:"beats_reference"`
	NeedsArbitration bool `json:"needs_arbitration"`
}

// Replay decides a search folder's retained version offline from its two
// history files alone, with the same function the live search uses. rule
// "" means the folder's frozen rule, or RuleReference when it has none.
func Replay(dir, rule string) (ReplayResult, error) {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return ReplayResult{}, fmt.Errorf("replay %s: not a search folder", dir)
	}
	if rule == "" {
		frozen, ok, err := ReadFrozen(dir)
		if err != nil {
			return ReplayResult{}, err
		}
		rule = DefaultRule
		if ok && frozen.Judging != "" {
			rule = frozen.Judging
		}
	}
	if err := CheckRule(rule); err != nil {
		return ReplayResult{}, err
	}
	hist, err := ReadHistory(filepath.Join(dir, ComparisonHistoryFile))
	if err != nil {
		return ReplayResult{}, err
	}
	champs, err := ReadHistory(filepath.Join(dir, ChampionHistoryFile))
	if err != nil {
		return ReplayResult{}, err
	}
	d := Decide(rule, verdicts(hist), verdicts(champs))
	return ReplayResult{RetainedVersion: d.Retained, BeatsReference: d.BeatsReference, NeedsArbitration: d.NeedsArbitration}, nil
}
