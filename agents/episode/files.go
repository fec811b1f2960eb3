package episode

import (
	"encoding/json"
	"fmt"
	"github.com/mass-dev/mass/agents/grade"
	"github.com/mass-dev/mass/agents/guard"
	"os"
	"path/filepath"
	"time"

	"github.com/mass-dev/mass/episodefmt"
)

// File names inside an episode directory: those of package episodefmt,
// which the readers share (docs/formats.md).
const (
	EpisodeFile   = episodefmt.EpisodeFile
	RequestsFile  = episodefmt.RequestsFile
	LedgerFile    = episodefmt.LedgerFile
	StatusFile    = episodefmt.StatusFile
	ExportFile    = episodefmt.ExportFile
	ExportManFile = episodefmt.ExportManFile
	ManifestsDir  = episodefmt.ManifestsDir
)

// Exits and failure subtypes of run_status.json.
const (
	ExitCompleted = "completed"
	ExitFailed    = "failed"
	ExitCancelled = "cancelled"

	FailLoop      = "loop"
	FailTimeout   = "timeout"
	FailModel     = "model_error"
	FailInfra     = "infrastructure"
	FailCancelled = "cancelled"
)

// Info is episode.json: what was run (episodefmt.Info).
type Info = episodefmt.Info

// ToolCall is one entry of run_status.json's last_tool_calls.
type ToolCall struct {
	Agent       string `json:"agent"`
	Tool        string `json:"tool"`
	ArgsSummary string `json:"args_summary"`
	OK          bool   `json:"ok"`
}

// Tokens counts generated and prompt tokens of all model calls.
type Tokens struct {
	Prompt     int64 `json:"prompt"`
	Completion int64 `json:"completion"`
}

// Status is run_status.json: the outcome.
type Status struct {
	EpisodeID       string     `json:"episode_id"`
	Exit            string     `json:"exit"`
	Success         bool       `json:"success"`
	Failure         string     `json:"failure"`
	Reason          string     `json:"reason"`
	LastToolCalls   []ToolCall `json:"last_tool_calls"`
	Agents          int        `json:"agents"`
	ModelCalls      int        `json:"model_calls"`
	ToolCalls       int        `json:"tool_calls"`
	Tokens          Tokens     `json:"tokens"`
	Started         time.Time  `json:"started"`
	Finished        time.Time  `json:"finished"`
	WorkspaceExport string     `json:"workspace_export"`
	Final           string     `json:"final,omitempty"` // the orchestrator's final answer
	Model           string     `json:"model,omitempty"`
	DryRun          bool       `json:"dry_run,omitempty"`
	// LedgerHead is the ledger's last record when the episode ended, so a
	// verifier can tell a cut-off tail from a complete ledger.
	LedgerHead *Head `json:"ledger_head,omitempty"`
	// OutputsPresent: every required output glob matched an exported file.
	OutputsPresent bool `json:"outputs_present"`
	// Grade is the task grader's verdict; absent when the task has none.
	Grade *grade.Grade `json:"grade,omitempty"`
	// Guards counts guards.json; absent when the check could not run.
	Guards *guard.Summary `json:"guards,omitempty"`
}

// Head names a ledger's last record.
type Head struct {
	Seq  int64  `json:"seq"`
	Hash string `json:"hash"`
}

// writeJSON writes v to path atomically (temp file, fsync, rename).
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o640)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err = f.Write(append(b, '\n')); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// ReadStatus reads an episode's run_status.json.
func ReadStatus(dir string) (Status, error) {
	var s Status
	b, err := os.ReadFile(filepath.Join(dir, StatusFile))
	if err != nil {
		return s, fmt.Errorf("read run status: %w", err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("parse %s: %w", filepath.Join(dir, StatusFile), err)
	}
	return s, nil
}
