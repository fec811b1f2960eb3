package eligibility

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// maxStatusBytes caps run_status.json as read here.
const maxStatusBytes = 16 << 20

// status is the part of run_status.json the predicate reads.
type status struct {
	EpisodeID      string `json:"episode_id"`
	Exit           string `json:"exit"`
	DryRun         bool   `json:"dry_run"`
	OutputsPresent *bool  `json:"outputs_present"`
	Success        bool   `json:"success"`
	Grade          *struct {
		Passed bool `json:"passed"`
	} `json:"grade"`
	Guards *struct {
		Violations   int  `json:"protected_path_violations"`
		ShadowCopies int  `json:"shadow_copies"`
		Checked      bool `json:"integrity_checked"`
	} `json:"guards"`
}

// info is the part of episode.json the predicate reads.
type info struct {
	Graded bool `json:"graded"`
	DryRun bool `json:"dry_run"`
}

// FromDir reads an episode directory's run_status.json and episode.json
// (docs/formats.md). An episode without run_status.json never finished.
func FromDir(dir string) (Episode, error) {
	var st status
	if err := readJSON(filepath.Join(dir, "run_status.json"), &st); err != nil {
		return Episode{}, err
	}
	var in info
	if err := readJSON(filepath.Join(dir, "episode.json"), &in); err != nil {
		return Episode{}, err
	}
	e := Episode{ID: st.EpisodeID, Completed: st.Exit == "completed", DryRun: st.DryRun || in.DryRun,
		GraderDeclared: in.Graded || st.Grade != nil}
	if e.ID == "" {
		e.ID = filepath.Base(dir)
	}
	if st.OutputsPresent != nil {
		e.OutputsPresent = *st.OutputsPresent
	}
	if st.Grade != nil {
		e.GraderPassed = st.Grade.Passed
	}
	if g := st.Guards; g != nil {
		e.Violations, e.ShadowCopies, e.GuardsChecked = g.Violations, g.ShadowCopies, g.Checked
	}
	return e, nil
}

func readJSON(p string, v any) error {
	f, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("read %s: %w", filepath.Base(p), err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxStatusBytes+1))
	if err != nil {
		return fmt.Errorf("read %s: %w", p, err)
	}
	if len(b) > maxStatusBytes {
		return fmt.Errorf("read %s: larger than %d bytes", p, maxStatusBytes)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("parse %s: %w", p, err)
	}
	return nil
}
