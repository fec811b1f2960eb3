// Package generationfmt is the on-disk format of a generation directory
// (<data-dir>/generations/<g>), owned by its writer (cycle/generation) and
// shared with its readers (the API, the report, massctl): the file names,
// generation.json, selection.json and owner.json. docs/formats.md describes
// every file. The package imports nothing of mass.
package generationfmt

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Files in a generation's directory (docs/formats.md describes them).
const (
	SummaryFile   = "generation.json"
	TasksFile     = "tasks.json"     // stage eligible
	SelectionFile = "selection.json" // stage select: {"train":[ids],"val":[ids]}, data build's selection
	DatasetFile   = "dataset.json"   // stage render
	TrainFile     = "train.json"     // stage train
	ExportFile    = "export.json"    // stage export
	ServeFile     = "serve.json"     // stage serve
	CollectDir    = "collect"        // collect/<task>/episodes.json, collect/<task>/outcome.json
	RankDir       = "rank"           // rank/<task>/judgments.json, matches.jsonl, ranking.json
)

// ConfigFile is a generation directory's frozen, resolved configuration.
const ConfigFile = "config.json"

// CycleFile is the cycle job's record in its work directory.
const CycleFile = "cycle.json"

// OwnerFile names the job that made a generation directory.
const OwnerFile = "owner.json"

// TrashPrefix starts the name a removed generation directory is renamed
// to before it is deleted; listings skip such names (not numbers).
const TrashPrefix = ".removed-"

// Statuses of a generation.
const (
	StatusRunning = "running"
	StatusDone    = "done"
	StatusFailed  = "failed"
)

// MaxFileBytes caps a JSON file of a generation directory as read here.
const MaxFileBytes = 16 << 20

// ReadJSON reads path into v; ok is false when the file does not exist.
// A file over MaxFileBytes, or not a regular file, is an error.
func ReadJSON(path string, v any) (ok bool, err error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return false, fmt.Errorf("read %s: not a regular file", path)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	if len(b) > MaxFileBytes {
		return false, fmt.Errorf("read %s: larger than %d bytes", path, MaxFileBytes)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, fmt.Errorf("parse %s: %w", path, err)
	}
	return true, nil
}

// ReadSummary reads generation.json of generation directory dir.
func ReadSummary(dir string) (Summary, error) {
	var s Summary
	ok, err := ReadJSON(filepath.Join(dir, SummaryFile), &s)
	if err == nil && !ok {
		err = fmt.Errorf("%s: no %s (not a generation directory)", dir, SummaryFile)
	}
	return s, err
}

// ReadOwner returns the job that claimed generation directory dir; ok is
// false when none did.
func ReadOwner(dir string) (job string, ok bool, err error) {
	var o struct {
		Job string `json:"job"`
	}
	ok, err = ReadJSON(filepath.Join(dir, OwnerFile), &o)
	if ok && o.Job == "" {
		return "", false, fmt.Errorf("%s: no job named", filepath.Join(dir, OwnerFile))
	}
	return o.Job, ok, err
}

// RemoveDir removes generation directory dir so that nothing is left
// half-deleted under its number: it is first renamed, in one step, to a
// trash name beside it, then deleted; trash that an earlier removal left
// (a crash mid-delete) is deleted too.
func RemoveDir(dir string) error {
	parent := filepath.Dir(dir)
	trash := filepath.Join(parent, TrashPrefix+filepath.Base(dir)+"-"+strconv.FormatInt(time.Now().UnixNano(), 10))
	if err := os.Rename(dir, trash); err != nil {
		return fmt.Errorf("remove generation %s: %w", filepath.Base(dir), err)
	}
	ents, err := os.ReadDir(parent)
	if err != nil {
		return fmt.Errorf("remove generation %s: %w", filepath.Base(dir), err)
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), TrashPrefix) {
			continue
		}
		if err := os.RemoveAll(filepath.Join(parent, e.Name())); err != nil {
			return fmt.Errorf("remove generation %s: delete %s: %w", filepath.Base(dir), e.Name(), err)
		}
	}
	return nil
}
