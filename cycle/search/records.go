package search

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/mass-dev/mass/cycle/workflow"
)

// Record files of a search (docs/formats.md).
const (
	ComparisonHistoryFile = "records/comparison_history.jsonl"
	ChampionHistoryFile   = "records/champion_history.jsonl"
	RetainedFile          = "retained_workflow.json"
)

// ChampionEvent is one line of records/champion_history.jsonl.
type ChampionEvent struct {
	Iteration int    `json:"iteration"`
	Version   int    `json:"version"`
	Previous  int    `json:"previous"` // -1 for the first champion
	Reason    string `json:"reason"`
	Key       string `json:"key,omitempty"` // the comparison that made it champion
}

// Retained is retained_workflow.json.
type Retained struct {
	SearchID             string `json:"search_id"`
	TaskID               string `json:"task_id"`
	Version              int    `json:"version"`
	BeatsReference       bool   `json:"beats_reference"`
	Model                string `json:"model"`
	LastEvaluatedVersion int    `json:"last_evaluated_version"`
	Design               string `json:"design"` // versions/multi_agent_design_v{version}.txt
	Finished             bool   `json:"finished"`
}

// record appends a comparison, moves the champion on a win against it, and
// rewrites the history files from memory (so a resumed run never
// duplicates a line).
func (r *runner) record(c Comparison) error {
	r.mu.Lock()
	c.ChampionBefore = r.champion
	if c.Against == "champion" && c.Outcome == OutcomeWin {
		r.champion = version(c.Candidate)
		c.ChampionChanged = true
	}
	r.history = append(r.history, c)
	hist := append([]Comparison(nil), r.history...)
	r.mu.Unlock()
	r.progress(func(p *Progress) {
		if c.Against == "reference" && c.Candidate == fmt.Sprintf("v%d", r.champion) {
			p.RefWins, p.RefLosses = boolInt(c.Outcome == OutcomeWin), boolInt(c.Outcome == OutcomeLoss)
		}
	})
	if err := writeJSONL(filepath.Join(r.cfg.Dir, ComparisonHistoryFile), hist); err != nil {
		return err
	}
	if err := writeJSONL(filepath.Join(r.cfg.Dir, ChampionHistoryFile), championHistory(hist)); err != nil {
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

// championHistory derives the champion's changes from the comparisons.
func championHistory(hist []Comparison) []ChampionEvent {
	ev := []ChampionEvent{{Iteration: 0, Version: 0, Previous: -1, Reason: "initial design v0"}}
	for _, c := range hist {
		if c.ChampionChanged {
			ev = append(ev, ChampionEvent{Iteration: c.Iteration, Version: version(c.Candidate), Previous: c.ChampionBefore,
				Reason: fmt.Sprintf("%s won against champion %s", c.Candidate, c.Opponent), Key: c.Key})
		}
	}
	return ev
}

// beatsReference reports whether version v won its comparison with the reference.
func beatsReference(hist []Comparison, v int) bool {
	for _, c := range hist {
		if c.Against == "reference" && version(c.Candidate) == v {
			return c.Outcome == OutcomeWin
		}
	}
	return false
}

func (r *runner) writeRetained(finished bool) error {
	r.mu.Lock()
	champ, hist := r.champion, append([]Comparison(nil), r.history...)
	r.mu.Unlock()
	last := 0
	for _, c := range hist {
		last = max(last, version(c.Candidate))
	}
	ret := Retained{SearchID: r.cfg.SearchID, TaskID: r.cfg.TaskID, Version: champ, BeatsReference: beatsReference(hist, champ),
		Model: r.cfg.Model, LastEvaluatedVersion: last, Design: filepath.Join(workflow.VersionsDir, workflow.VersionFile(champ)), Finished: finished}
	b, _ := json.MarshalIndent(ret, "", "  ")
	if err := workflow.WriteFileAtomic(filepath.Join(r.cfg.Dir, RetainedFile), append(b, '\n')); err != nil {
		return err
	}
	rel, err := filepath.Rel(r.cfg.TaskDir, filepath.Join(r.cfg.Dir, ret.Design))
	if err != nil {
		rel = ret.Design
	}
	return workflow.WritePointer(r.cfg.TaskDir, workflow.Pointer{TaskID: r.cfg.TaskID, SearchID: r.cfg.SearchID,
		Version: champ, BeatsReference: ret.BeatsReference, Design: rel})
}

func writeJSONL[T any](path string, rows []T) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
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
	Iterations       int    `json:"iterations"`
	ChampionVersion  int    `json:"champion_version"`
	BeatsReference   bool   `json:"beats_reference"`
	Comparisons      int    `json:"comparisons"` // valid verdicts
	InvalidJudgments int    `json:"invalid_judgments"`
	FailedIterations int    `json:"failed_iterations"`
	Episodes         int    `json:"episodes"`         // finished slots
	EpisodeAttempts  int    `json:"episode_attempts"` // attempts in all, retried ones included
	Calls            Calls  `json:"calls_this_run"`
	Tokens           int64  `json:"tokens_this_run"`
}

func (r *runner) summary() Summary {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := Summary{SearchID: r.cfg.SearchID, Task: r.cfg.TaskID, Dir: r.cfg.Dir, Iterations: r.cfg.Iterations,
		ChampionVersion: r.champion, BeatsReference: beatsReference(r.history, r.champion), Calls: r.calls, Tokens: r.prog.Tokens}
	for _, c := range r.history {
		s.Comparisons += c.Wins + c.Losses + c.Ties
		s.InvalidJudgments += c.Invalid
	}
	r.slots.mu.Lock()
	for _, sl := range r.slots.m {
		s.EpisodeAttempts += len(sl.Attempts)
		if sl.Result != nil {
			s.Episodes++
		}
	}
	r.slots.mu.Unlock()
	s.FailedIterations = r.failed
	return s
}

func (r *runner) finish() error {
	r.progress(func(p *Progress) { p.Stage = "done" })
	return r.writeRetained(true)
}
