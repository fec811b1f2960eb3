// Package jobkind is the contract between massd's job manager and the kinds
// of work it runs: a Kind's Run receives a Job and a Reporter. It is a leaf:
// the kinds (agents, cycle, trainer) import it, never the daemon or a store.
package jobkind

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/mass-dev/mass/datadir"
)

// InterruptPolicy says what happens to a job that was running when massd died.
type InterruptPolicy string

const (
	// Retry marks the job interrupted and queues it again from the start.
	Retry InterruptPolicy = "retry"
	// Resume queues it again; the kind continues from its own checkpoints.
	Resume InterruptPolicy = "resume"
	// Fail leaves it interrupted for a person to look at.
	Fail InterruptPolicy = "fail"
)

// Kind is a type of work massd can run as a job.
type Kind struct {
	Name        string
	Description string
	OnInterrupt InterruptPolicy
	// Validate, if set, checks a submission's params before the job is
	// queued; its error is returned to the submitter as a 400 and no job is
	// created. It should name the field and the fix (see DecodeParams).
	Validate func(params json.RawMessage) error
	// NeedsTask makes Submit refuse a submission without a task id.
	NeedsTask bool
	// StageEvent, if set, is the event type Run appends each time it enters
	// a stage of a sequential pipeline (the first of an attempt is the stage
	// it resumes in): a later one in the same attempt means a stage finished,
	// which counts as progress for the attempt budget (MaxAutoAttempts).
	StageEvent string
	// Run does the work. It must return promptly once ctx is cancelled
	// (cancellation or daemon drain) and leave its files consistent.
	//
	// Concurrency: the manager calls Run from its own goroutine, once per
	// job attempt, and runs up to Options.Concurrency jobs at once, so Run
	// is called concurrently for different jobs of the same kind and must
	// share nothing mutable between them but what is safe for concurrent
	// use (the services.Services a kind is constructed from is). Attempts
	// of one job never overlap. rep may be used from any goroutine Run
	// starts, but not after Run returned. A panic in Run fails the job instead of the daemon.
	Run func(ctx context.Context, job Job, rep Reporter) error
}

// Job is what a Kind's Run receives.
type Job struct {
	ID      string
	Kind    string
	TaskID  string          // empty for jobs without a task
	TaskDir string          // Layout.Task(TaskID), holding spec.yaml and the inputs
	Params  json.RawMessage // kind-specific parameters as submitted
	Attempt int             // 1 for the first run, +1 per retry or resume
	Layout  datadir.Layout  // massd's data directory
	WorkDir string          // Layout.Job(ID), created before Run
}

// Reporter is how a running job tells the world what it does. Safe for
// concurrent use.
type Reporter interface {
	// Event appends a durable event to the job's stream.
	Event(typ, msg string, fields map[string]any)
	// Progress replaces the job's live progress (stage and counters).
	Progress(p Progress)
	// SetResult records the job's result document (JSON object) on success.
	SetResult(v any)
	// Episode records or updates an episode this job runs (episodes table).
	Episode(e EpisodeRecord)
	Logger() *slog.Logger
}

// Progress is a job's live stage and counters for `massctl job watch`; the
// one type from the reporter to the wire (api.Progress is this type).
type Progress struct {
	Stage    string           `json:"stage"`
	Counters map[string]int64 `json:"counters,omitempty"`
	Message  string           `json:"message,omitempty"`
}

// EpisodeRecord is one row of the episodes table.
type EpisodeRecord struct {
	ID      string `json:"id"`
	JobID   string `json:"job_id"`
	TaskID  string `json:"task_id"`
	Status  string `json:"status"` // running, completed, failed, cancelled, interrupted
	Dir     string `json:"dir"`    // Layout.Episode(ID)
	Summary any    `json:"summary,omitempty"`
}
