// Package searchfmt is the on-disk format of a workflow search directory
// (<data-dir>/search/<task>/<id>), owned by its writer (cycle/search) and
// shared with its readers (the cycle, the API, massctl): the file names and
// retained_workflow.json. docs/formats.md describes every file. The
// package imports nothing of mass.
package searchfmt

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
)

// Files and folders of a search directory.
const (
	RetainedFile          = "retained_workflow.json"
	ComparisonHistoryFile = "records/comparison_history.jsonl"
	ChampionHistoryFile   = "records/champion_history.jsonl"
	EpisodesFile          = "records/episodes.json"
	ConfigFile            = "config.json"
	ComparisonsDir        = "comparisons"
	PromptsDir            = "evaluation_prompts" // the optimizer's prompt and result per step
	VersionsDir           = "versions"           // one design file per version
)

// PointerFile is the per-task champion pointer, <data-dir>/search/<task>/champion.json.
const PointerFile = "champion.json"

// VersionFile is the reference's name of design v(k) in VersionsDir.
func VersionFile(k int) string { return fmt.Sprintf("multi_agent_design_v%d.txt", k) }

var versionRE = regexp.MustCompile(`^multi_agent_design_v([0-9]{1,6})\.txt$`)

// ParseVersionFile returns k for VersionFile(k); ok is false for any
// other name.
func ParseVersionFile(name string) (k int, ok bool) {
	m := versionRE.FindStringSubmatch(name)
	if m == nil {
		return 0, false
	}
	k, err := strconv.Atoi(m[1])
	return k, err == nil
}

// Retained is retained_workflow.json: the reference's fields first, then
// mass's.
type Retained struct {
	// Version is the retained (proven) champion; null when no version
	// beat the baseline under the reference rule.
	Version              *int   `json:"version"`
	BeatsReference       bool   `json:"beats_reference"`
	Model                string `json:"model"`
	LastEvaluatedVersion int    `json:"last_evaluated_version"`

	SearchID string `json:"search_id"`
	TaskID   string `json:"task_id"`
	Judging  string `json:"judging"`
	Champion int    `json:"champion"` // the version holding the crown (v0 by default)
	Design   string `json:"design"`   // versions/multi_agent_design_v{champion}.txt
	Finished bool   `json:"finished"`
}

// MaxRetainedBytes caps retained_workflow.json as read here.
const MaxRetainedBytes = 1 << 20

// ReadRetained reads dir/retained_workflow.json of search directory dir.
// A missing file is an error that wraps fs.ErrNotExist.
func ReadRetained(dir string) (Retained, error) {
	var r Retained
	p := filepath.Join(dir, RetainedFile)
	f, err := os.Open(p)
	if err != nil {
		return r, fmt.Errorf("read retained workflow: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxRetainedBytes+1))
	if err != nil {
		return r, fmt.Errorf("read %s: %w", p, err)
	}
	if len(b) > MaxRetainedBytes {
		return r, fmt.Errorf("read %s: larger than %d bytes", p, MaxRetainedBytes)
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("parse %s: %w", p, err)
	}
	return r, nil
}
