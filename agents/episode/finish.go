package episode

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"time"

	"github.com/mass-dev/mass/agents/tools"
	"github.com/mass-dev/mass/sandbox"
)

// finishTimeout bounds the export and cleanup after the episode ended.
const finishTimeout = 5 * time.Minute

// finish stops every container, exports the workspace, removes it, runs
// the grader and the guard checks, settles success and writes
// run_status.json; it runs even when the episode's context ended.
func (e *run) finish(st *Status) error {
	ctx, cancel := context.WithTimeout(context.Background(), finishTimeout)
	defer cancel()
	e.prog.stage("exporting")
	var errs []error
	budget := e.deps.CleanupBudget
	if err := retryCleanup(ctx, e.deps.Log, "kill containers of "+e.opts.ID, budget, func(ctx context.Context) error {
		return e.deps.Runtime.KillEpisode(ctx, e.opts.ID)
	}); err != nil {
		errs = append(errs, fmt.Errorf("kill episode containers: %w", err))
	}
	if err := e.saveEgress(ctx, st); err != nil {
		errs = append(errs, err)
	}
	// A workspace that was never made (its creation failed or was
	// cancelled, e.g. while waiting for capacity) has nothing to export;
	// the status already says why.
	exported := false
	if e.made {
		exp, err := e.export(ctx)
		if exported = err == nil; err != nil {
			errs = append(errs, err)
		} else {
			st.WorkspaceExport = exp
		}
	}
	if err := retryCleanup(ctx, e.deps.Log, "remove workspace of "+e.opts.ID, budget, func(ctx context.Context) error {
		return e.deps.Runtime.RemoveWorkspace(ctx, e.opts.ID)
	}); err != nil {
		errs = append(errs, fmt.Errorf("remove workspace: %w", err))
	}
	p := e.prog.snapshot()
	st.Agents, st.ModelCalls, st.ToolCalls = p.Agents, p.Turns, p.ToolCalls
	st.Tokens = Tokens{Prompt: p.PromptTokens, Completion: p.CompletionTokens}
	st.LastToolCalls = p.LastCalls
	if st.LastToolCalls == nil {
		st.LastToolCalls = []ToolCall{}
	}
	if err := e.rec.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close recording: %w", err))
	}
	seq, hash := e.led.Head()
	st.LedgerHead = &Head{Seq: seq, Hash: hash}
	if err := e.led.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close ledger: %w", err))
	}
	if exported && st.Exit != ExitCancelled {
		st.Grade = e.gradeWorkspace(context.Background())
	}
	if g, err := e.checkGuards(exported); err != nil {
		errs = append(errs, err)
	} else {
		st.Guards = g
	}
	if exported {
		e.settle(st)
	}
	st.Finished = time.Now().UTC()
	if len(errs) > 0 && st.Exit == ExitCompleted {
		// The team finished but the record is incomplete: not a usable episode.
		st.Exit, st.Success, st.Failure = ExitFailed, false, FailInfra
		st.Reason = errors.Join(errs...).Error()
	}
	st.Reason = tools.Cap(st.Reason, MaxReasonBytes)
	if err := writeJSON(filepath.Join(e.opts.Dir, StatusFile), st); err != nil {
		errs = append(errs, err)
	}
	e.prog.stage("done")
	return errors.Join(errs...)
}

// settle decides success: the team completed, every required output
// exists and, where the task declares a grader, it passed. A dry-run
// episode is checked the same way and says that it is one.
func (e *run) settle(st *Status) {
	missing := e.missingOutput()
	st.OutputsPresent = missing == ""
	if st.Exit != ExitCompleted {
		return
	}
	omitted := e.omittedExport()
	switch {
	case missing != "":
		st.Success, st.Reason = false, fmt.Sprintf("required output %q is missing from the workspace", missing)
	case omitted != "":
		// The export could not carry everything the agents made (a file
		// larger than the workspace, paths past PATH_MAX): the record is not
		// the whole workspace, so the episode is not a usable one.
		st.Success, st.Reason = false, omitted
	case st.Grade != nil && !st.Grade.Passed:
		st.Success, st.Reason = false, "grader did not pass: "+st.Grade.Reason
	default:
		st.Success = true
	}
	if e.info.DryRun {
		if st.Success {
			st.Reason = "dry run (scripted policy, no real model); its outputs passed the task's checks"
		} else {
			st.Reason = "dry run (scripted policy, no real model); " + st.Reason
		}
	}
}

// export writes workspace.tar and workspace.manifest.json.
func (e *run) export(ctx context.Context) (string, error) {
	p := filepath.Join(e.opts.Dir, ExportFile)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o640)
	if err != nil {
		return "", fmt.Errorf("create workspace export: %w", err)
	}
	limit := e.deps.ExportBytes
	if limit <= 0 {
		limit = DefaultExportBytes
	}
	m, err := e.deps.Runtime.ExportWorkspace(ctx, e.opts.ID, f, limit)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		// A partial tar is never left for the API to serve.
		if rmErr := os.Remove(p); rmErr != nil && !errors.Is(rmErr, fs.ErrNotExist) {
			err = errors.Join(err, fmt.Errorf("remove partial export: %w", rmErr))
		}
		return "", fmt.Errorf("export workspace (cap %d bytes): %w", limit, err)
	}
	if m == nil {
		m = []sandbox.FileInfo{}
	}
	if err := writeJSON(filepath.Join(e.opts.Dir, ExportManFile), m); err != nil {
		return "", err
	}
	e.exported = m
	return p, nil
}

// omittedExport describes the manifest entries the export left out (or
// left out below), or "" when it carried everything.
func (e *run) omittedExport() string {
	var first string
	n := 0
	for _, f := range e.exported {
		if f.Omitted == "" {
			continue
		}
		if n == 0 {
			first = fmt.Sprintf("%s: %s", f.Path, f.Omitted)
		}
		n++
	}
	switch n {
	case 0:
		return ""
	case 1:
		return "the workspace export left out " + first
	}
	return fmt.Sprintf("the workspace export left out %d entries (workspace.manifest.json lists them), first %s", n, first)
}

// missingOutput returns the first required output glob that matches no
// exported file, or "".
func (e *run) missingOutput() string {
	for _, g := range e.opts.Task.RequiredOutputs {
		found := false
		for _, f := range e.exported {
			if ok, _ := path.Match(g, f.Path); ok && f.Type == "file" {
				found = true
				break
			}
		}
		if !found {
			return g
		}
	}
	return ""
}
