package generation

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/mass-dev/mass/generationfmt"
)

// Statuses of a generation (generationfmt).
const (
	StatusRunning = generationfmt.StatusRunning
	StatusDone    = generationfmt.StatusDone
	StatusFailed  = generationfmt.StatusFailed
)

func (p *pipeline) summarizeTasks(collected []Collected, ranked []Ranked) {
	byTask := map[string]Ranked{}
	for _, r := range ranked {
		byTask[r.Task] = r
	}
	p.sum.Tasks = []TaskSummary{}
	p.sum.Tokens.Generated = 0
	for _, c := range collected {
		p.sum.Tokens.Generated += c.Tokens
		if c.Excluded != "" {
			p.sum.Excluded = append(p.sum.Excluded, Excluded{ID: c.Task, Reason: c.Excluded})
			continue
		}
		r := byTask[c.Task]
		p.sum.Tokens.Generated += r.Tokens
		if r.Excluded != "" {
			p.sum.Excluded = append(p.sum.Excluded, Excluded{ID: c.Task, Reason: r.Excluded})
		}
		t := TaskSummary{ID: c.Task, Episodes: c.Runs, Successful: len(c.Eligible), Judgments: r.Judgments,
			InvalidJudgments: r.Invalid, Ranking: []RankEntry{}, Train: r.Selection.Train, Val: r.Selection.Val}
		for _, s := range r.Scores {
			t.Ranking = append(t.Ranking, RankEntry{ID: s.ID, Score: s.Score, Rank: s.Rank})
		}
		p.sum.Tasks = append(p.sum.Tasks, t)
	}
}

// selection joins the tasks' selections; no task left is an error.
func (p *pipeline) selection(ranked []Ranked) (Selection, error) {
	s := Selection{Train: []string{}, Val: []string{}}
	for _, r := range ranked {
		if r.Excluded != "" {
			continue
		}
		s.Train = append(s.Train, r.Selection.Train...)
		s.Val = append(s.Val, r.Selection.Val...)
	}
	if len(s.Train) == 0 {
		why := make([]string, len(p.sum.Excluded))
		for i, e := range p.sum.Excluded {
			why[i] = e.ID + ": " + e.Reason
		}
		return s, fmt.Errorf("no task left to train on (%d excluded): %s", len(p.sum.Excluded), strings.Join(why, "; "))
	}
	return s, nil
}

func (p *pipeline) save() error {
	return writeJSON(filepath.Join(p.cfg.Dir, SummaryFile), p.sum)
}

// The types of generation.json and selection.json (generationfmt).
type (
	Summary     = generationfmt.Summary
	StageTime   = generationfmt.StageTime
	Tokens      = generationfmt.Tokens
	TaskSummary = generationfmt.TaskSummary
	RankEntry   = generationfmt.RankEntry
	Selection   = generationfmt.Selection
	Excluded    = generationfmt.Excluded
	Training    = generationfmt.Training
)
