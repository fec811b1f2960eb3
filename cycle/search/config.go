package search

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/mass-dev/mass/cycle/judge"
	"github.com/mass-dev/mass/cycle/workflow"
)

// Defaults of a search.
const (
	DefaultIterations = 11
	MaxIterations     = 100
	JudgeModeBundle   = "bundle"
	JudgeModeAgent    = "agent"
)

// EpisodeRequest asks for one episode of a slot ("reference", "v0", "v3").
type EpisodeRequest struct {
	ID       string // episode id, chosen and recorded by the search before the run
	Slot     string
	Attempt  int    // 1 for the first try; +1 per try cut off by a crash
	Workflow string // empty for the bare-task reference
	Prompt   string // when set, the orchestrator's first message verbatim (the folder's query file)
	Model    string
	Seed     int
}

// EpisodeResult is what the search keeps of a finished episode. It carries
// no grade, guards or audit: the optimizer must never see them.
type EpisodeResult struct {
	EpisodeID string `json:"episode_id"`
	Dir       string `json:"dir"`
	Export    string `json:"workspace_export"` // path of the export tar; empty when none
	Exit      string `json:"exit"`
	Success   bool   `json:"success"`
	Failure   string `json:"failure,omitempty"`
	LoopHalt  bool   `json:"loop_halt,omitempty"`
	// FailureMessage and LastToolCalls (oldest first) describe an
	// episode that did not complete; never the grade or its reason.
	FailureMessage string     `json:"failure_message,omitempty"`
	LastToolCalls  []ToolCall `json:"last_tool_calls,omitempty"`
	TeacherPrompt  string     `json:"-"`
	ModelCalls     int        `json:"model_calls"`
	Tokens         int64      `json:"tokens"`
	DryRun         bool       `json:"dry_run,omitempty"`
	// OutputsPresent says every required output exists (the deliverables
	// check, not the grade); nil in records written before it was kept.
	OutputsPresent *bool `json:"outputs_present,omitempty"`
}

// Episodes runs episodes for the search.
type Episodes interface {
	// Run runs one episode to its end. An error means no usable record.
	Run(ctx context.Context, req EpisodeRequest) (EpisodeResult, error)
	// Close finishes the record of an episode a crash cut off (no-op when
	// it finished or never started).
	Close(ctx context.Context, id string) error
}

// Config is one search.
type Config struct {
	SearchID       string
	TaskID         string
	Task           judge.Task
	V0             workflow.Workflow
	Model          string // executor
	JudgeModel     string
	OptimizerModel string
	Iterations     int // 0: only the reference and v0
	Seed           int64
	Judgments      int  // per comparison
	JudgeRetries   *int // re-asks of an unparseable verdict; nil: judge.MaxAttempts-1
	JudgeMode      string
	Rule           string // judging rule: reference (default), paper, adjacent
	ReferenceID    string // the task's reference query number (updated_queries names)
	// Template is the task's query template: each design runs inside its
	// text (QueryTemplate.Render); nil: the task and the design only.
	Template *QueryTemplate
	Opts     PromptOptions // the optimizer prompt's toggles; zero: DefaultPromptOptions
	Dir      string        // <data-dir>/search/<task>/<search_id>
	TaskDir  string        // <data-dir>/search/<task>: the champion pointer
	Episodes Episodes
	Models   judge.Model
	Judges   judge.AgentRunner // judge-agent episodes (judge mode "agent")
	Log      *slog.Logger
	Observe  func(Progress) // optional; must not block
}

// Defaults fills unset fields.
func (c *Config) Defaults() {
	if c.JudgeModel == "" {
		c.JudgeModel = c.Model
	}
	if c.OptimizerModel == "" {
		c.OptimizerModel = c.Model
	}
	if c.Judgments == 0 {
		c.Judgments = 1
	}
	if c.JudgeMode == "" {
		c.JudgeMode = JudgeModeBundle
	}
	if c.Rule == "" {
		c.Rule = DefaultRule
	}
	if c.Opts.OutputMode == "" {
		c.Opts = DefaultPromptOptions()
	}
	if c.JudgeRetries == nil {
		n := judge.MaxAttempts - 1
		c.JudgeRetries = &n
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
}

// Validate checks a defaulted config.
func (c *Config) Validate() error {
	switch {
	case c.SearchID == "" || c.TaskID == "" || c.Dir == "" || c.TaskDir == "":
		return errors.New("search: search id, task id and directories are required")
	case c.JudgeMode == JudgeModeAgent && c.Judges == nil:
		return errors.New("search: judge mode \"agent\" needs a judge-agent runner")
	case c.Episodes == nil || c.Models == nil:
		return errors.New("search: episodes and models are required")
	}
	if err := c.ValidateValues(); err != nil {
		return err
	}
	return c.V0.Validate()
}

// ValidateValues checks the settings a job's params set, without the parts
// (episodes, models, judges, v0): what CheckParams checks at submission.
func (c *Config) ValidateValues() error {
	switch {
	case c.Iterations < 0 || c.Iterations > MaxIterations:
		return fmt.Errorf("search: iterations %d not in 0..%d", c.Iterations, MaxIterations)
	case c.Judgments < 1 || c.Judgments > 9:
		return fmt.Errorf("search: judgments per comparison %d not in 1..9", c.Judgments)
	case *c.JudgeRetries < 0 || *c.JudgeRetries > 9:
		return fmt.Errorf("search: judge retries %d not in 0..9", *c.JudgeRetries)
	case CheckRule(c.Rule) != nil:
		return fmt.Errorf("search: %w", CheckRule(c.Rule))
	case c.JudgeMode != JudgeModeBundle && c.JudgeMode != JudgeModeAgent:
		return fmt.Errorf("search: judge mode %q: want bundle or agent", c.JudgeMode)
	case c.Opts.Validate() != nil:
		return fmt.Errorf("search: %w", c.Opts.Validate())
	}
	return nil
}

// Progress is the search's live state.
type Progress struct {
	Iteration       int    `json:"iteration"`
	Iterations      int    `json:"iterations"`
	Stage           string `json:"stage"`
	ChampionVersion int    `json:"champion_version"`
	RefWins         int    `json:"ref_wins"`
	RefLosses       int    `json:"ref_losses"`
	Tokens          int64  `json:"tokens"`
	Message         string `json:"message,omitempty"`
}
