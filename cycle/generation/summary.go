package generation

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Statuses of a generation.
const (
	StatusRunning = "running"
	StatusDone    = "done"
	StatusFailed  = "failed"
)

// Summary is generation.json, also what `massctl generation show --json` prints.
type Summary struct {
	Generation int           `json:"generation"`
	Dir        string        `json:"dir"`
	Model      string        `json:"model"` // the name generation g is registered under
	Parent     string        `json:"parent"`
	Status     string        `json:"status"`
	Error      string        `json:"error,omitempty"`
	Stages     []StageTime   `json:"stages"`
	Tasks      []TaskSummary `json:"tasks"`
	Excluded   []Excluded    `json:"excluded"`
	Dataset    string        `json:"dataset,omitempty"`
	Training   *Training     `json:"training,omitempty"`
	Adapter    string        `json:"adapter"`
	Merged     string        `json:"merged"`
	FP8        string        `json:"fp8,omitempty"`
	Tokens     Tokens        `json:"tokens"`
}

// StageTime is a finished stage and how long it ran (its last run).
type StageTime struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
}

// Tokens keeps the three counts apart.
type Tokens struct {
	Generated           int64 `json:"generated"`            // every model call of every episode and judgment
	StoredSupervised    int64 `json:"stored_supervised"`    // in the dataset
	ProcessedSupervised int64 `json:"processed_supervised"` // sampled up to the chosen checkpoint
}

// TaskSummary is one task that reached ranking.
type TaskSummary struct {
	ID               string      `json:"id"`
	Episodes         int         `json:"episodes"`   // runs made
	Successful       int         `json:"successful"` // eligible
	Judgments        int         `json:"judgments"`  // valid verdicts
	InvalidJudgments int         `json:"invalid_judgments"`
	Ranking          []RankEntry `json:"ranking"`
	Train            []string    `json:"train"`
	Val              []string    `json:"val"`
}

// RankEntry is one episode's place.
type RankEntry struct {
	ID    string  `json:"id"`
	Score float64 `json:"score"`
	Rank  int     `json:"rank"`
}

// Selection is selection.json: the union over tasks, data build's format.
type Selection struct {
	Train []string `json:"train"`
	Val   []string `json:"val"`
}

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
			p.sum.Excluded = append(p.sum.Excluded, Excluded{c.Task, c.Excluded})
			continue
		}
		r := byTask[c.Task]
		p.sum.Tokens.Generated += r.Tokens
		if r.Excluded != "" {
			p.sum.Excluded = append(p.sum.Excluded, Excluded{c.Task, r.Excluded})
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

// Load reads a generation's summary from its directory.
func Load(dir string) (Summary, error) {
	var s Summary
	ok, err := readJSON(filepath.Join(dir, SummaryFile), &s)
	if err == nil && !ok {
		err = fmt.Errorf("%s: no %s (not a generation directory)", dir, SummaryFile)
	}
	return s, err
}
