package generation

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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

// writeJSON writes v to path atomically: a temporary file, synced, renamed
// over path, the directory synced. A reader never sees half a file.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	return writeFile(path, append(b, '\n'))
}

func writeFile(path string, b []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	_, werr := f.Write(b)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), path)
	}
	if werr != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", path, werr)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

// readJSON reads path into v; ok is false when the file does not exist.
func readJSON(path string, v any) (ok bool, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, fmt.Errorf("parse %s: %w", path, err)
	}
	return true, nil
}
