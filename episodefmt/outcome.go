package episodefmt

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Exits of run_status.json.
const (
	ExitCompleted = "completed"
	ExitFailed    = "failed"
	ExitCancelled = "cancelled"
)

// MaxStatusBytes caps run_status.json as ReadOutcome reads it.
const MaxStatusBytes = 16 << 20

// Outcome is the part of run_status.json that readers outside the episode
// runner use: how the episode ended, the grader's verdict and the guard
// counts. The runner (agents/episode.Status) writes the whole file; its
// test pins that what it writes reads back here.
type Outcome struct {
	EpisodeID string `json:"episode_id"`
	Exit      string `json:"exit"`
	Success   bool   `json:"success"`
	DryRun    bool   `json:"dry_run"`
	// OutputsPresent is nil in a record written before the field existed.
	OutputsPresent *bool         `json:"outputs_present"`
	Grade          *OutcomeGrade `json:"grade"`  // absent when the task has no grader
	Guards         *GuardCounts  `json:"guards"` // absent when the check could not run
}

// OutcomeGrade is the grader verdict's part an Outcome carries.
type OutcomeGrade struct {
	Passed bool `json:"passed"`
}

// GuardCounts is the guard summary's part an Outcome carries.
type GuardCounts struct {
	Violations   int  `json:"protected_path_violations"`
	ShadowCopies int  `json:"shadow_copies"`
	Checked      bool `json:"integrity_checked"`
}

// ReadOutcome reads dir/run_status.json. An episode without one never
// finished; that error wraps fs.ErrNotExist.
func ReadOutcome(dir string) (Outcome, error) {
	var o Outcome
	p := filepath.Join(dir, StatusFile)
	f, err := os.Open(p)
	if err != nil {
		return o, fmt.Errorf("read %s: %w", StatusFile, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxStatusBytes+1))
	if err != nil {
		return o, fmt.Errorf("read %s: %w", p, err)
	}
	if len(b) > MaxStatusBytes {
		return o, fmt.Errorf("read %s: larger than %d bytes", p, MaxStatusBytes)
	}
	if err := json.Unmarshal(b, &o); err != nil {
		return o, fmt.Errorf("parse %s: %w", p, err)
	}
	return o, nil
}
