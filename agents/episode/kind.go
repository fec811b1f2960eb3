package episode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mass-dev/mass/agents/grade"
	"github.com/mass-dev/mass/agents/guard"
	"github.com/mass-dev/mass/errclass"
	"github.com/mass-dev/mass/jobkind"
	"github.com/mass-dev/mass/jobwire"
)

// KindName is the job kind that runs one episode.
const KindName = jobwire.EpisodeKind

// Params are the parameters of an "episode" job (jobwire.EpisodeParams).
type Params = jobwire.EpisodeParams

// The on_interrupt values.
const (
	OnInterruptRetry = "retry"
	OnInterruptFail  = "fail"
)

// Result is the job's result document.
type Result struct {
	EpisodeID       string `json:"episode_id"`
	Dir             string `json:"dir"`
	Exit            string `json:"exit"`
	Success         bool   `json:"success"`
	Failure         string `json:"failure,omitempty"`
	Reason          string `json:"reason,omitempty"`
	WorkspaceExport string `json:"workspace_export"`
	Model           string `json:"model"`
	DryRun          bool   `json:"dry_run,omitempty"`
	Agents          int    `json:"agents"`
	ModelCalls      int    `json:"model_calls"`
	ToolCalls       int    `json:"tool_calls"`
	Tokens          Tokens `json:"tokens"`
	OutputsPresent  bool   `json:"outputs_present"`
	// Grade and Guards are the ground truth and the guard counts; they are
	// recorded for later stages and never shown to a model.
	Grade  *grade.Grade   `json:"grade,omitempty"`
	Guards *guard.Summary `json:"guards,omitempty"`
	// Attempt is the job attempt that ran this episode; LostAttempts are
	// the episodes earlier attempts started and a massd crash cut off.
	Attempt      int           `json:"attempt,omitempty"`
	LostAttempts []LostAttempt `json:"lost_attempts,omitempty"`
}

// attemptsFile lists, one per line, the episode ids a job attempt started,
// so a retry after a crash can close the record of the one that was cut off.
const attemptsFile = "episodes.txt"

// NewKind returns the "episode" job kind.
//
// OnInterrupt is Retry: an episode is one sample of a stochastic team, and
// its in-flight model calls and containers die with massd, so it cannot be
// resumed faithfully. The retry first closes the interrupted episode's
// record (run_status.json with failure "infrastructure", containers and
// workspace removed) and then runs a fresh episode with a new id; the
// interrupted one stays on disk for inspection and is never used as data.
func NewKind(d Deps, defaultModel string) jobkind.Kind {
	return jobkind.Kind{
		Name:        KindName,
		Description: "run one MASS episode: orchestrator and sub-agents in sandboxes on a task (params: model, workflow, seed, on_interrupt retry|fail)",
		OnInterrupt: jobkind.Retry,
		NeedsTask:   true,
		Validate:    func(raw json.RawMessage) error { _, err := parseParams(d, defaultModel, raw); return err },
		Run: func(ctx context.Context, job jobkind.Job, rep jobkind.Reporter) error {
			return runJob(ctx, d, defaultModel, job, rep)
		},
	}
}

func runJob(ctx context.Context, d Deps, defaultModel string, job jobkind.Job, rep jobkind.Reporter) error {
	p, err := parseParams(d, defaultModel, job.Params)
	if err != nil {
		return err
	}
	if job.TaskDir == "" {
		return errors.New("episode job needs a task: submit it with a task id")
	}
	spec, err := job.LoadTask()
	if err != nil {
		return fmt.Errorf("load task %s: %w", job.TaskID, err)
	}
	if d.Log == nil {
		d.Log = rep.Logger()
	}
	lost := closeInterrupted(d, job, rep)
	if len(lost) > 0 && p.OnInterrupt == OnInterruptFail {
		rep.SetResult(Result{Attempt: job.Attempt, LostAttempts: lost})
		l := lost[len(lost)-1]
		return fmt.Errorf("attempt %d was cut off by a massd restart (episode %s, %d model calls, %d tokens spent); on_interrupt is fail, so no new episode runs (massctl job retry %s runs one)",
			l.Attempt, l.EpisodeID, l.ModelCalls, l.Tokens.Prompt+l.Tokens.Completion, job.ID)
	}

	id := NewID()
	dir := job.Layout.Episode(id)
	if err := appendLine(filepath.Join(job.WorkDir, attemptsFile), id); err != nil {
		return err
	}
	rep.Episode(jobkind.EpisodeRecord{ID: id, JobID: job.ID, TaskID: job.TaskID, Status: "running", Dir: dir})
	rep.Event("episode_started", "episode "+id, map[string]any{"episode_id": id, "dir": dir, "model": p.Model})
	var last time.Time
	observe := func(pr Progress) {
		// Progress snapshots are cheap but each is a database write; keep
		// to about ten per second, always passing stage changes.
		if pr.Stage == "running" && time.Since(last) < 100*time.Millisecond {
			return
		}
		last = time.Now()
		rep.Progress(jobkind.Progress{Stage: pr.Stage, Message: pr.Last, Counters: map[string]int64{
			"agents": int64(pr.Agents), "running_agents": int64(len(pr.Running)), "turns": int64(pr.Turns),
			"tool_calls": int64(pr.ToolCalls), "prompt_tokens": pr.PromptTokens, "completion_tokens": pr.CompletionTokens,
		}})
	}
	st, err := Run(ctx, d, Options{ID: id, JobID: job.ID, Task: spec, TaskID: job.TaskID, Workflow: p.Workflow,
		Model: p.Model, Seed: p.Seed, Dir: dir, Observe: serialize(observe)})
	if st.EpisodeID == "" {
		rep.Episode(jobkind.EpisodeRecord{ID: id, JobID: job.ID, TaskID: job.TaskID, Status: "failed", Dir: dir})
		return err
	}
	res := Result{EpisodeID: id, Dir: dir, Exit: st.Exit, Success: st.Success, Failure: st.Failure, Reason: st.Reason,
		WorkspaceExport: st.WorkspaceExport, Model: st.Model, DryRun: st.DryRun, Agents: st.Agents,
		ModelCalls: st.ModelCalls, ToolCalls: st.ToolCalls, Tokens: st.Tokens, OutputsPresent: st.OutputsPresent,
		Grade: st.Grade, Guards: st.Guards, Attempt: job.Attempt, LostAttempts: lost}
	rep.Episode(jobkind.EpisodeRecord{ID: id, JobID: job.ID, TaskID: job.TaskID, Status: st.Exit, Dir: dir, Summary: res})
	fields := map[string]any{}
	b, _ := json.Marshal(res)
	_ = json.Unmarshal(b, &fields)
	rep.Event("episode_finished", fmt.Sprintf("episode %s %s", id, st.Exit), fields)
	rep.SetResult(res)
	if err != nil {
		return fmt.Errorf("episode %s: %w", id, err)
	}
	if st.Exit == ExitCancelled {
		return ctx.Err()
	}
	if !st.Success && !(st.DryRun && st.Exit == ExitCompleted) {
		// A completed dry run exercised the machinery; its summary says
		// whether its outputs passed.
		return fmt.Errorf("episode %s %s (%s): %s", id, st.Exit, st.Failure, st.Reason)
	}
	return nil
}

// parseParams decodes an episode job's params, filling the default model,
// and checks that the model is one this massd can call.
func parseParams(d Deps, defaultModel string, raw json.RawMessage) (Params, error) {
	var p Params
	if err := jobkind.DecodeParams(raw, &p); err != nil {
		return p, fmt.Errorf("episode params: %w", err)
	}
	if p.Model == "" {
		p.Model = defaultModel
	}
	switch p.OnInterrupt {
	case "":
		p.OnInterrupt = OnInterruptRetry
	case OnInterruptRetry, OnInterruptFail:
	default:
		return p, &errclass.FieldError{Field: "on_interrupt", Msg: fmt.Sprintf("%q is neither %q nor %q", p.OnInterrupt, OnInterruptRetry, OnInterruptFail)}
	}
	if d.Models != nil {
		if _, err := d.Models(p.Model); err != nil {
			return p, &errclass.FieldError{Field: "model", Msg: fmt.Sprintf("%v (see massctl model list)", err)}
		}
	}
	return p, nil
}

// serialize makes an observer safe to call from concurrent agents.
func serialize(f func(Progress)) func(Progress) {
	ch := make(chan struct{}, 1)
	ch <- struct{}{}
	return func(p Progress) {
		<-ch
		defer func() { ch <- struct{}{} }()
		f(p)
	}
}

func appendLine(p, line string) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o640)
	if err != nil {
		return fmt.Errorf("record episode id: %w", err)
	}
	_, err = fmt.Fprintln(f, line)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("record episode id: %w", err)
	}
	return nil
}
