package generation

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/mass-dev/mass/generationfmt"
	"github.com/mass-dev/mass/internal/atomicfile"
)

// Files in a generation's directory (generationfmt; docs/formats.md).
const (
	SummaryFile   = generationfmt.SummaryFile
	TasksFile     = generationfmt.TasksFile
	SelectionFile = generationfmt.SelectionFile
	DatasetFile   = generationfmt.DatasetFile
	TrainFile     = generationfmt.TrainFile
	ExportFile    = generationfmt.ExportFile
	ServeFile     = generationfmt.ServeFile
	CollectDir    = generationfmt.CollectDir
	RankDir       = generationfmt.RankDir
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
	return atomicfile.Write(path, b, 0o640)
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
