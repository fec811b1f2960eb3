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

// finish stops every container, exports the workspace, removes it, and
// writes run_status.json; it runs even when the episode's context ended.
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
	exp, err := e.export(ctx)
	if err != nil {
		errs = append(errs, err)
	} else {
		st.WorkspaceExport = exp
		switch {
		case st.Success && e.info.DryRun:
			// The scripted policy only exercises the machinery; it never
			// attempts the task, so its outputs are not checked.
			st.Reason = "dry-run model: the task's required outputs were not checked"
		case st.Success:
			e.checkOutputs(st)
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
	st.Finished = time.Now().UTC()
	if err := e.rec.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close recording: %w", err))
	}
	seq, hash := e.led.Head()
	st.LedgerHead = &Head{Seq: seq, Hash: hash}
	if err := e.led.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close ledger: %w", err))
	}
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

// checkOutputs marks a completed episode unsuccessful when a required
// output glob matches no exported file.
func (e *run) checkOutputs(st *Status) {
	for _, g := range e.opts.Task.RequiredOutputs {
		found := false
		for _, f := range e.exported {
			if ok, _ := path.Match(g, f.Path); ok && f.Type == "file" {
				found = true
				break
			}
		}
		if !found {
			st.Success = false
			st.Reason = fmt.Sprintf("required output %q is missing from the workspace", g)
			return
		}
	}
}
