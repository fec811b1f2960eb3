package workflow

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/mass-dev/mass/internal/atomicfile"
	"github.com/mass-dev/mass/searchfmt"
)

// VersionsDir holds a search's designs, one file per version.
const VersionsDir = searchfmt.VersionsDir

// VersionFile is the reference's name of design v(k).
func VersionFile(k int) string { return searchfmt.VersionFile(k) }

// Versions is the versions folder of one search directory.
type Versions struct{ Dir string } // the search directory

// Path is the file of version k.
func (v Versions) Path(k int) string { return filepath.Join(v.Dir, VersionsDir, VersionFile(k)) }

// Put writes version k (canonical text) atomically. A version is written
// once: Put of an existing version with other bytes is an error.
func (v Versions) Put(k int, w Workflow) error {
	if err := w.Validate(); err != nil {
		return err
	}
	text := w.Render()
	if old, err := os.ReadFile(v.Path(k)); err == nil {
		if string(old) == text {
			return nil
		}
		return fmt.Errorf("design v%d already exists with other content", k)
	}
	if err := os.MkdirAll(filepath.Dir(v.Path(k)), 0o750); err != nil {
		return fmt.Errorf("create versions dir: %w", err)
	}
	return WriteFileAtomic(v.Path(k), []byte(text))
}

// Get reads and parses version k (a free-text design included).
func (v Versions) Get(k int) (Workflow, error) {
	b, err := os.ReadFile(v.Path(k))
	if err != nil {
		return Workflow{}, fmt.Errorf("read design v%d: %w", k, err)
	}
	w, err := ParseDesign(string(b))
	if err != nil {
		return Workflow{}, fmt.Errorf("design v%d: %w", k, err)
	}
	return w, nil
}

// List returns the stored version numbers in ascending order.
func (v Versions) List() ([]int, error) {
	ents, err := os.ReadDir(filepath.Join(v.Dir, VersionsDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list designs: %w", err)
	}
	var ks []int
	for _, e := range ents {
		if k, ok := searchfmt.ParseVersionFile(e.Name()); ok && e.Type().IsRegular() {
			ks = append(ks, k)
		}
	}
	sort.Ints(ks)
	return ks, nil
}

// PointerFile is the per-task champion pointer, <data-dir>/search/<task>/champion.json.
const PointerFile = searchfmt.PointerFile

// Pointer names the current champion of a task: the search that produced it
// and its version there.
type Pointer struct {
	TaskID         string `json:"task_id"`
	SearchID       string `json:"search_id"`
	Version        int    `json:"version"`
	BeatsReference bool   `json:"beats_reference"`
	Design         string `json:"design"` // path of the design file, relative to the task's search folder
}

// WritePointer replaces the pointer in taskDir (<data-dir>/search/<task>).
func WritePointer(taskDir string, p Pointer) error {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return fmt.Errorf("encode champion pointer: %w", err)
	}
	if err := os.MkdirAll(taskDir, 0o750); err != nil {
		return fmt.Errorf("create %s: %w", taskDir, err)
	}
	return WriteFileAtomic(filepath.Join(taskDir, PointerFile), append(b, '\n'))
}

// ReadPointer reads the pointer in taskDir.
func ReadPointer(taskDir string) (Pointer, error) {
	var p Pointer
	b, err := os.ReadFile(filepath.Join(taskDir, PointerFile))
	if err != nil {
		return p, fmt.Errorf("read champion pointer: %w", err)
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return p, fmt.Errorf("parse champion pointer: %w", err)
	}
	return p, nil
}

// WriteFileAtomic writes b to path through a synced temporary file and a rename.
func WriteFileAtomic(path string, b []byte) error { return atomicfile.Write(path, b, 0o640) }

// ParseFile reads and parses a workflow file.
func ParseFile(path string) (Workflow, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Workflow{}, fmt.Errorf("read workflow: %w", err)
	}
	return Parse(string(b))
}
