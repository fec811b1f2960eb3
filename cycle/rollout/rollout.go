package rollout

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"

	"github.com/mass-dev/mass/cycle/generation"
	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/errclass"
)

// Defaults.
const (
	DefaultEpisodes    = 10 // bare-prompt episodes per task and model
	DefaultConcurrency = 4
	DefaultAttempts    = 3
)

// Files in an evaluation directory (evals/<name>, docs/formats.md).
const (
	SummaryFile = "rollout.json"
	OwnerFile   = "owner.json"
	EpisodesDir = "episodes" // episodes/<task>/<model>.json: the slot book
)

// EpisodeRequest is one bare-prompt episode.
type EpisodeRequest struct {
	ID      string // episode id, new for every attempt
	Task    string
	Model   string
	Index   int
	Attempt int
	Seed    int64
}

// EpisodeResult is a finished episode: its exit, the task grader's
// verdict (ground truth) and the tokens of its model calls.
type EpisodeResult struct {
	EpisodeID        string   `json:"episode_id"`
	Exit             string   `json:"exit"`
	Success          bool     `json:"success"`
	Graded           bool     `json:"graded"` // a grader ran to an exit
	Passed           bool     `json:"passed"`
	Score            *float64 `json:"score,omitempty"`
	PromptTokens     int64    `json:"prompt_tokens"`
	CompletionTokens int64    `json:"completion_tokens"`
	Error            string   `json:"error,omitempty"` // the attempts failed; no episode
}

// Episodes runs bare-prompt episodes. Run returns when the episode ended;
// an error means the episode could not run (the slot is retried). Close
// releases what an interrupted episode left.
type Episodes interface {
	Run(ctx context.Context, req EpisodeRequest) (EpisodeResult, error)
	Close(ctx context.Context, episodeID string) error
}

// Tasks says which split a task is in.
type Tasks interface {
	Split(ctx context.Context, task string) (string, error)
}

// Config is one rollout.
type Config struct {
	Name        string
	Dir         string // evals/<name>
	Tasks       []string
	Models      []string // the first is the baseline of judge-pairs
	Episodes    int
	Seed        int64
	Concurrency int
	Attempts    int
	Runner      Episodes
	Log         *slog.Logger
	Progress    func(msg string)
}

// Run is one episode slot of the summary.
type Run struct {
	Task  string `json:"task"`
	Model string `json:"model"`
	Index int    `json:"index"`
	Seed  int64  `json:"seed"`
	EpisodeResult
}

// Summary is rollout.json, also the job's result.
type Summary struct {
	Name     string   `json:"name"`
	Dir      string   `json:"dir"`
	Tasks    []string `json:"tasks"`
	Models   []string `json:"models"`
	Episodes int      `json:"episodes"`
	Seed     int64    `json:"seed"`
	Runs     []Run    `json:"runs"` // task, model, index order
}

// SeedFor is the seed of episode index of a task: the same for every model.
func SeedFor(seed int64, task string, index int) int64 {
	return generation.SeedOf(seed, "rollout", task) + int64(index)
}

// Execute runs every slot not finished yet and writes rollout.json.
func Execute(ctx context.Context, c Config) (Summary, error) {
	sum := Summary{Name: c.Name, Dir: c.Dir, Tasks: c.Tasks, Models: c.Models, Episodes: c.Episodes, Seed: c.Seed, Runs: []Run{}}
	type unit struct {
		task, model string
		book        *generation.Book[EpisodeResult]
	}
	var units []unit
	for _, t := range c.Tasks {
		for _, m := range c.Models {
			b, err := generation.OpenBook[EpisodeResult](BookPath(c.Dir, t, m))
			if err != nil {
				return sum, err
			}
			units = append(units, unit{t, m, b})
		}
	}
	n := len(units) * c.Episodes
	err := generation.Parallel(ctx, n, c.Concurrency, func(ctx context.Context, k int) error {
		u, i := units[k%len(units)], k/len(units) // index-major: pairs finish together
		return c.slot(ctx, u.book, u.task, u.model, i)
	})
	if err != nil {
		return sum, err
	}
	for _, u := range units {
		for _, s := range u.book.Slots() {
			i, _ := strconv.Atoi(s.Name)
			if s.Result != nil && i < c.Episodes {
				sum.Runs = append(sum.Runs, Run{Task: u.task, Model: u.model, Index: i, Seed: s.Seed, EpisodeResult: *s.Result})
			}
		}
	}
	return sum, generation.WriteJSON(filepath.Join(c.Dir, SummaryFile), sum)
}

// BookPath is the slot book of one task and model.
func BookPath(dir, task, model string) string {
	return filepath.Join(dir, EpisodesDir, task, model+".json")
}

func (c Config) slot(ctx context.Context, b *generation.Book[EpisodeResult], task, model string, i int) error {
	seed := SeedFor(c.Seed, task, i)
	_, err := b.Run(ctx, fmt.Sprintf("%02d", i), seed, generation.Work[EpisodeResult]{
		Attempts: c.Attempts,
		NewID:    func(int) string { return newEpisodeID() },
		Close:    c.Runner.Close,
		Do: func(ctx context.Context, a generation.Attempt) (EpisodeResult, error) {
			if c.Progress != nil {
				c.Progress(fmt.Sprintf("%s %s episode %02d attempt %d", task, model, i, a.N))
			}
			r, err := c.Runner.Run(ctx, EpisodeRequest{ID: a.ID, Task: task, Model: model, Index: i, Attempt: a.N, Seed: seed})
			if err == nil && r.EpisodeID == "" {
				r.EpisodeID = a.ID
			}
			return r, err
		},
		Fail: func(err error) *EpisodeResult { return &EpisodeResult{Error: "episode error: " + err.Error()} },
	})
	return err
}

// Load reads an evaluation's rollout.json.
func Load(l datadir.Layout, name string) (Summary, error) {
	var s Summary
	ok, err := generation.ReadJSON(filepath.Join(l.Eval(name), SummaryFile), &s)
	if err == nil && !ok {
		err = fmt.Errorf("evaluation %s has no finished rollout (%s): %w", name, SummaryFile, errclass.ErrNotFound)
	}
	return s, err
}
