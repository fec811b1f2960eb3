package episode

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mass-dev/mass/agents/grade"
	"github.com/mass-dev/mass/agents/guard"
	"github.com/mass-dev/mass/agents/tools"
	"github.com/mass-dev/mass/episodefmt"
	"github.com/mass-dev/mass/internal/atomicfile"
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
	EgressFile    = episodefmt.EgressFile
)

// Exits and failure subtypes of run_status.json.
const (
	ExitCompleted = episodefmt.ExitCompleted
	ExitFailed    = episodefmt.ExitFailed
	ExitCancelled = episodefmt.ExitCancelled

	FailLoop      = "loop"
	FailTimeout   = "timeout"
	FailModel     = "model_error"
	FailInfra     = episodefmt.FailInfra
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
	// Final is the orchestrator's final answer, cut to MaxFinalBytes; the
	// whole answer is in api_requests.jsonl. FinalBytes is its full length
	// when it was cut.
	Final      string `json:"final,omitempty"`
	FinalBytes int    `json:"final_bytes,omitempty"`
	Model      string `json:"model,omitempty"`
	DryRun     bool   `json:"dry_run,omitempty"`
	// LedgerHead is the ledger's last record when the episode ended, so a
	// verifier can tell a cut-off tail from a complete ledger.
	LedgerHead *Head `json:"ledger_head,omitempty"`
	// OutputsPresent: every required output glob matched an exported file.
	OutputsPresent bool `json:"outputs_present"`
	// Grade is the task grader's verdict; absent when the task has none.
	Grade *grade.Grade `json:"grade,omitempty"`
	// Guards counts guards.json; absent when the check could not run.
	Guards *guard.Summary `json:"guards,omitempty"`
	// Egress counts egress.jsonl; absent for a task without network.
	Egress *EgressSummary `json:"egress,omitempty"`
}

// Caps on what is copied into run_status.json (docs/formats.md, Caps).
const (
	MaxFinalBytes  = 64 << 10
	MaxReasonBytes = 16 << 10
)

// setFinal copies the final answer into st, cut to MaxFinalBytes.
func (st *Status) setFinal(s string) {
	st.Final = tools.Cap(s, MaxFinalBytes)
	if len(s) > MaxFinalBytes {
		st.FinalBytes = len(s)
	}
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
	return atomicfile.Write(path, append(b, '\n'), 0o640)
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
