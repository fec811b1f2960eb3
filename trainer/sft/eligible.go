package sft

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/mass-dev/mass/agents/eligibility"
)

// Exclusion is one episode the eligibility predicate keeps out of a dataset.
type Exclusion struct {
	Episode string `json:"episode"`
	Dir     string `json:"dir"`
	Reason  string `json:"reason"`
}

// Select splits episode directories into those eligibility.Check admits
// into dataset d and those it excludes, with the reason. An episode whose
// record cannot be read is excluded, saying why.
func Select(dirs []string, d eligibility.Dataset) (keep []string, excluded []Exclusion) {
	excluded = []Exclusion{}
	for _, dir := range dirs {
		e, err := eligibility.FromDir(dir)
		reason := ""
		switch {
		case errors.Is(err, fs.ErrNotExist):
			reason = "no run_status.json: the episode never finished"
		case err != nil:
			reason = err.Error()
		default:
			reason = eligibility.Check(e, d)
		}
		if reason == "" {
			keep = append(keep, dir)
			continue
		}
		excluded = append(excluded, Exclusion{Episode: filepath.Base(dir), Dir: dir, Reason: reason})
	}
	return keep, excluded
}

// datasetFiles are what a built dataset holds.
var datasetFiles = []string{"manifest.json", "rows.jsonl", "windows.bin"}

// checkOverwrite refuses an output directory that already holds a dataset.
func checkOverwrite(outDir string, force bool) error {
	if force {
		return nil
	}
	for _, f := range datasetFiles {
		if _, err := os.Lstat(filepath.Join(outDir, f)); err == nil {
			return fmt.Errorf("dataset %s already exists (%s); pass --force to replace it", outDir, f)
		}
	}
	return nil
}
