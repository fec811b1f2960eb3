// Package episode runs one MASS episode: it creates the workspace, runs the
// orchestrator and its sub-agents in their own sandboxes, enforces the
// episode clock, records every model call and tool call, exports the
// workspace and writes run_status.json. It also provides the "episode" job kind.
package episode

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mass-dev/mass/agents/agent"
	"github.com/mass-dev/mass/agents/guard"
	"github.com/mass-dev/mass/agents/ledger"
	"github.com/mass-dev/mass/agents/loop"
	"github.com/mass-dev/mass/agents/model"
	"github.com/mass-dev/mass/agents/prompts"
	"github.com/mass-dev/mass/agents/record"
	"github.com/mass-dev/mass/episodefmt"
	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/taskspec"
)

// Defaults for limits a task leaves unset.
const (
	DefaultWallTime    = time.Hour
	DefaultAgentTurns  = 200
	DefaultExportBytes = 1 << 30
	lastCalls          = 10
)

// Deps are the long-lived parts an episode uses.
type Deps struct {
	Runtime  sandbox.Runtime
	Models   func(name string) (model.Client, error)
	DryRun   func(name string) bool // reports the dry-run (scripted) models
	DaemonID string
	Image    string         // sandbox image; empty means the runtime default
	Policy   sandbox.Policy // zero means sandbox.DefaultPolicy()
	Log      *slog.Logger
	// Loop overrides the loop-detection thresholds (tests).
	Loop loop.Config
	// CleanupBudget bounds the retries of removing an episode's
	// containers and volumes; 0 means DefaultCleanupBudget. What is left
	// then is the periodic reaper's (Reap).
	CleanupBudget time.Duration
	// ExportBytes caps the workspace export; 0 means DefaultExportBytes.
	// Task inputs are capped below it (taskspec.MaxInputBytes).
	ExportBytes int64
	// AgentWallTime bounds each agent of a task that sets no
	// limits.agent_wall_time; 0 means only the episode clock applies.
	AgentWallTime time.Duration
	// ParallelAgents bounds the sub-agents of one episode running at the
	// same time (the agent calls of one message run concurrently); 0 means
	// DefaultParallelAgents, 1 runs them one after another.
	ParallelAgents int
	// Compress overrides history compression (tests: a small context
	// window); zero compresses at agent.DefaultCompressThreshold of the
	// model's context window.
	Compress agent.Compression
}

// Options describe one episode.
type Options struct {
	ID       string // empty: a fresh id
	JobID    string
	Task     *taskspec.Spec
	TaskID   string
	Workflow string // workflow text; empty runs the bare task
	// Directive, when set, replaces mass's execution directive in the
	// teacher prompt, verbatim (e.g. the reference's teacher_directive.txt).
	Directive string
	// NoDirective sends task + workflow without any execution directive
	// (workflow-search episodes; the reference appends its directive only
	// at collection).
	NoDirective bool
	// Teacher, when set, is the orchestrator's first message verbatim (a
	// search resuming a folder whose query file for the version exists).
	Teacher string
	Model   string
	Seed    *int   // sampling seed of every model call; nil: the model's configured seed
	Dir     string // episode directory; created
	// Observe receives progress; it must not block.
	Observe func(Progress)
}

// NewID returns a fresh episode id ("ep-" + 16 hex digits).
func NewID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "ep-" + hex.EncodeToString(b[:])
}

// Run executes one episode to its end and returns its status. The error is
// non-nil only when the episode could not even be set up or its record
// could not be finished; a failed episode is reported in Status.
func Run(ctx context.Context, d Deps, o Options) (Status, error) {
	if o.ID == "" {
		o.ID = NewID()
	}
	if d.Log == nil {
		d.Log = slog.Default()
	}
	if o.Task == nil {
		return Status{}, fmt.Errorf("episode %s: no task", o.ID)
	}
	if ref := sandbox.ProfileImage(o.Task.Image); ref != "" {
		d.Image = ref // the task's image profile (spec `image:`)
	}
	live.Store(o.ID, struct{}{})
	defer live.Delete(o.ID)
	client, err := d.Models(o.Model)
	if err != nil {
		return Status{}, fmt.Errorf("episode %s: model %q: %w", o.ID, o.Model, err)
	}
	if err := os.MkdirAll(filepath.Join(o.Dir, ManifestsDir), 0o750); err != nil {
		return Status{}, fmt.Errorf("create episode dir: %w", err)
	}
	dry := d.DryRun != nil && d.DryRun(client.Name())
	mode := episodefmt.ModeBare
	if strings.TrimSpace(o.Workflow) != "" {
		mode = episodefmt.ModeWorkflow
	}
	teacher, err := prompts.TeacherWith(o.Task.Prompt, o.Workflow, o.Directive)
	if o.NoDirective {
		teacher, err = prompts.SearchPrompt(o.Task.Prompt, o.Workflow), nil
	}
	if o.Teacher != "" {
		teacher, err = o.Teacher, nil
	}
	if err != nil {
		return Status{}, fmt.Errorf("episode %s: %w", o.ID, err)
	}
	info := Info{EpisodeID: o.ID, TaskID: o.TaskID, Mode: mode, Model: client.Name(), DryRun: dry,
		Prompt: o.Task.Prompt, Workflow: o.Workflow, TeacherPrompt: teacher,
		ProtectedPaths: o.Task.ProtectedPaths, HiddenPaths: o.Task.HiddenDests(), Graded: o.Task.Grader != nil, Started: time.Now().UTC(), DaemonID: d.DaemonID, JobID: o.JobID,
		SandboxRuntime: sandbox.EffectiveRuntime(ctx, d.Runtime, d.Policy), SandboxImage: d.Image}
	if err := writeJSON(filepath.Join(o.Dir, EpisodeFile), info); err != nil {
		return Status{}, err
	}
	rec, err := record.Open(filepath.Join(o.Dir, RequestsFile), o.ID)
	if err != nil {
		return Status{}, err
	}
	led, err := ledger.Create(filepath.Join(o.Dir, LedgerFile), o.ID)
	if err != nil {
		rec.Close()
		return Status{}, err
	}
	e := &run{deps: d, opts: o, info: info, client: client, rec: rec, led: led,
		log: d.Log.With("episode", o.ID), prog: newProgress(o.Observe), slots: newSlots(d.ParallelAgents)}
	st := e.execute(ctx)
	return st, e.finish(&st)
}

// run is one episode in progress.
type run struct {
	deps   Deps
	opts   Options
	info   Info
	client model.Client
	rec    *record.Writer
	led    *ledger.Writer
	log    *slog.Logger
	prog   *progress
	slots  slots // sub-agents running at once

	mu       sync.Mutex
	workers  int
	manifest map[string]string // path -> sha256 after the last finished agent
	exported []sandbox.FileInfo
	shipped  []guard.File // protected files as shipped, hashed before the episode
	made     bool         // the workspace exists: CreateWorkspace succeeded
}

func (e *run) execute(ctx context.Context) Status {
	st := Status{EpisodeID: e.opts.ID, Started: e.info.Started, Model: e.info.Model, DryRun: e.info.DryRun}
	// The workspace is made under the parent context, before the episode
	// clock starts: a backend may wait here for capacity (the kubernetes
	// one admits an episode whole or waits, bounded by its own
	// start_timeout), and that wait is no part of the agents' time.
	e.prog.stageNote("workspace", waitingNote)
	// Hidden paths are never among the inputs: no agent's volume holds them.
	inputs := e.hostInputs(e.opts.Task.Inputs)
	e.hashShipped()
	ws := sandbox.WorkspaceSpec{Episode: e.opts.ID, Protected: e.opts.Task.ProtectedPaths}
	if err := e.deps.Runtime.CreateWorkspace(ctx, ws, inputs); err != nil {
		e.classify(ctx, ctx, &st, fmt.Errorf("create workspace: %w", err))
		return st
	}
	e.made = true
	wall := e.opts.Task.Limits.EpisodeWallTime
	if wall <= 0 {
		wall = DefaultWallTime
	}
	ectx, cancel := context.WithTimeoutCause(ctx, wall, errEpisodeClock)
	defer cancel()
	e.prog.stageNote("running", "") // the workspace note no longer holds
	res, err := e.runAgent(ectx, "orchestrator", record.RoleOrchestrator, "", e.info.TeacherPrompt)
	st.setFinal(res.Final)
	if err != nil {
		e.classify(ctx, ectx, &st, err)
		return st
	}
	st.Exit = ExitCompleted // success is settled after the export, grader and guards
	return st
}

var errEpisodeClock = errors.New("episode wall clock expired")

// waitingNote is the progress message while the workspace is made (a
// backend may wait for capacity meanwhile).
const waitingNote = "making the workspace; the episode clock starts once it exists"

// classify turns the error that ended an episode into exit, failure and reason.
func (e *run) classify(parent, ectx context.Context, st *Status, err error) {
	st.Exit, st.Success, st.Reason = ExitFailed, false, err.Error()
	var h *loop.Halt
	switch {
	case parent.Err() != nil:
		st.Exit, st.Failure = ExitCancelled, FailCancelled
		st.Reason = "episode cancelled: " + context.Cause(parent).Error()
	case errors.Is(context.Cause(ectx), errEpisodeClock):
		st.Failure = FailTimeout
		st.Reason = fmt.Sprintf("episode wall clock expired after %s: %v", e.opts.Task.Limits.EpisodeWallTime, err)
	case errors.As(err, &h):
		st.Failure = FailLoop
	case errors.Is(err, agent.ErrLimit):
		st.Failure = FailTimeout
	case errors.Is(err, model.ErrEndpoint):
		st.Failure = FailModel
	default:
		st.Failure = FailInfra
	}
}
