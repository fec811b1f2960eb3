package search

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/mass-dev/mass/cycle/workflow"
	"github.com/mass-dev/mass/searchfmt"
)

// Record files of a search (docs/formats.md).
const (
	ComparisonHistoryFile = searchfmt.ComparisonHistoryFile
	ChampionHistoryFile   = searchfmt.ChampionHistoryFile
	RetainedFile          = searchfmt.RetainedFile
)

// Retained is retained_workflow.json (searchfmt.Retained).
type Retained = searchfmt.Retained

// verdicts of rows, for Decide.
func verdicts(rows []Comparison) []Verdict {
	out := make([]Verdict, len(rows))
	for i, c := range rows {
		out[i] = c.Verdict()
	}
	return out
}

// decide applies the search's rule to its records so far.
func (r *runner) decideLocked() Decision {
	return Decide(r.cfg.Rule, verdicts(r.history), verdicts(r.arbitrations))
}

func (r *runner) decide() Decision {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.decideLocked()
}

// record appends a row to its history (arbitration rows to the champion
// history), re-decides the champion and rewrites the records from memory
// (so a resumed run never duplicates a line).
func (r *runner) record(c Comparison) error {
	r.mu.Lock()
	before := r.decideLocked().Champion
	if c.Against == AgainstChampion {
		r.arbitrations = append(r.arbitrations, c)
	} else {
		r.history = append(r.history, c)
	}
	d := r.decideLocked()
	last := &r.history
	if c.Against == AgainstChampion {
		last = &r.arbitrations
	}
	row := &(*last)[len(*last)-1]
	if row.Judgments != nil || row.Candidate != "" { // mass's fields; an adopted foreign row keeps its own
		row.ChampionBefore, row.ChampionChanged = before, d.Champion != before
	}
	r.champion = d.Champion
	hist, arb := append([]Comparison(nil), r.history...), append([]Comparison(nil), r.arbitrations...)
	r.mu.Unlock()
	r.progress(func(p *Progress) {
		if c.Against == AgainstReference && c.Candidate == fmt.Sprintf("v%d", d.Champion) {
			p.RefWins, p.RefLosses = boolInt(c.Winner == WinB), boolInt(c.Winner == WinA)
		}
	})
	if err := writeJSONL(filepath.Join(r.cfg.Dir, ComparisonHistoryFile), hist); err != nil {
		return err
	}
	if err := writeJSONL(filepath.Join(r.cfg.Dir, ChampionHistoryFile), arb); err != nil {
		return err
	}
	return r.writeRetained(false)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (r *runner) writeRetained(finished bool) error {
	d := r.decide()
	ret := Retained{Version: d.Retained, BeatsReference: d.BeatsReference, Model: r.cfg.Model, LastEvaluatedVersion: d.Current,
		SearchID: r.cfg.SearchID, TaskID: r.cfg.TaskID, Judging: r.cfg.Rule, Champion: d.Champion,
		Design: filepath.Join(workflow.VersionsDir, workflow.VersionFile(d.Champion)), Finished: finished}
	b, _ := json.MarshalIndent(ret, "", "  ")
	if err := workflow.WriteFileAtomic(filepath.Join(r.cfg.Dir, RetainedFile), append(b, '\n')); err != nil {
		return err
	}
	rel, err := filepath.Rel(r.cfg.TaskDir, filepath.Join(r.cfg.Dir, ret.Design))
	if err != nil {
		rel = ret.Design
	}
	return workflow.WritePointer(r.cfg.TaskDir, workflow.Pointer{TaskID: r.cfg.TaskID, SearchID: r.cfg.SearchID,
		Version: d.Champion, BeatsReference: ret.BeatsReference, Design: rel})
}

func writeJSONL[T any](path string, rows []T) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, row := range rows {
		if err := enc.Encode(row); err != nil {
			return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
		}
	}
	return workflow.WriteFileAtomic(path, b.Bytes())
}

// Summary is the search's result (massctl search --json).
type Summary struct {
	SearchID         string `json:"search_id"`
	Task             string `json:"task"`
	Dir              string `json:"dir"`
	Judging          string `json:"judging"`
	Iterations       int    `json:"iterations"`
	ChampionVersion  int    `json:"champion_version"` // the crown's holder (v0 by default)
	RetainedVersion  *int   `json:"retained_version"` // null without a proven win (rule reference)
	BeatsReference   bool   `json:"beats_reference"`
	Comparisons      int    `json:"comparisons"` // valid verdicts
	InvalidJudgments int    `json:"invalid_judgments"`
	FailedIterations int    `json:"failed_iterations"`
	Episodes         int    `json:"episodes"`         // finished slots
	EpisodeAttempts  int    `json:"episode_attempts"` // attempts in all, retried ones included
	Calls            Calls  `json:"calls_this_run"`
	Tokens           int64  `json:"tokens_this_run"`
	// Versions are the finished episodes, the reference first: what each
	// delivered and how its grade went.
	Versions []VersionOutcome `json:"versions"`
	// Warning is set when neither the reference nor the champion has the
	// task's required outputs (DeliverablesWarning).
	Warning string `json:"warning,omitempty"`
}

func (r *runner) summary() Summary {
	d := r.decide()
	r.mu.Lock()
	defer r.mu.Unlock()
	s := Summary{SearchID: r.cfg.SearchID, Task: r.cfg.TaskID, Dir: r.cfg.Dir, Judging: r.cfg.Rule, Iterations: r.cfg.Iterations,
		ChampionVersion: d.Champion, RetainedVersion: d.Retained, BeatsReference: d.BeatsReference, Calls: r.calls, Tokens: r.prog.Tokens}
	for _, rows := range [][]Comparison{r.history, r.arbitrations} {
		for _, c := range rows {
			s.Comparisons += c.Wins + c.Losses + c.Ties
			s.InvalidJudgments += c.Invalid
		}
	}
	r.slots.mu.Lock()
	var list []Slot
	for _, k := range slotOrder(r.slots.m) {
		sl := r.slots.m[k]
		s.EpisodeAttempts += len(sl.Attempts)
		if sl.Result != nil {
			s.Episodes++
		}
		list = append(list, *sl)
	}
	r.slots.mu.Unlock()
	s.Versions = Outcomes(list)
	s.Warning = DeliverablesWarning(s.Versions, d.Champion)
	s.FailedIterations = r.failed
	return s
}

func (r *runner) finish() error {
	r.progress(func(p *Progress) { p.Stage = "done" })
	return r.writeRetained(true)
}
