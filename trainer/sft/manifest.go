package sft

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Counts are window, token and stored supervised token totals.
type Counts struct {
	Windows          int   `json:"windows"`
	Tokens           int64 `json:"tokens"`
	SupervisedTokens int64 `json:"supervised_tokens"`
}

func (c *Counts) add(r *Row) {
	c.Windows++
	c.Tokens += int64(r.NTokens)
	c.SupervisedTokens += int64(r.NLossTokens)
}

// TaskCounts are a task's totals and their split by role.
type TaskCounts struct {
	Counts
	Episodes int                `json:"episodes"`
	ByRole   map[string]*Counts `json:"by_role"`
}

// Manifest describes a built dataset (manifest.json).
type Manifest struct {
	Version       int                    `json:"version"`
	Tokenizer     string                 `json:"tokenizer"`
	Template      string                 `json:"template"`
	TemplateHash  string                 `json:"template_sha256"`
	MaxTokens     int                    `json:"max_tokens"`
	ContextTokens int                    `json:"context_tokens"`
	Episodes      int                    `json:"episodes"`
	Threads       int                    `json:"threads"`
	Segments      int                    `json:"segments"`
	Total         Counts                 `json:"total"`
	ByRole        map[string]*Counts     `json:"by_role"`
	ByTask        map[string]*TaskCounts `json:"by_task"`
	Stats         Stats                  `json:"reconstruction"`
	// Dropped counts segments left out, by reason.
	Dropped map[string]int `json:"dropped,omitempty"`
	// EmptyEpisodes are episodes that yielded no window with supervised
	// tokens (a lenient build only; a strict one fails on the first).
	EmptyEpisodes []string          `json:"empty_episodes,omitempty"`
	Files         map[string]string `json:"files"`
	// RowsFormat is "reference" when rows.jsonl is in the reference pipeline's shape.
	RowsFormat string `json:"rows_format,omitempty"`
	// DryRun labels a dataset of dry-run (scripted) episodes.
	DryRun bool `json:"dry_run,omitempty"`
	// Excluded are the episodes the eligibility predicate kept out;
	// IncludedIneligible those it would have, built on explicit request.
	Excluded           []Exclusion `json:"excluded"`
	IncludedIneligible []Exclusion `json:"included_ineligible,omitempty"`
}

func newManifest() *Manifest {
	return &Manifest{Version: 1, ByRole: map[string]*Counts{}, ByTask: map[string]*TaskCounts{},
		Dropped: map[string]int{}, Files: map[string]string{"rows": "rows.jsonl", "binary": "windows.bin"}}
}

func (m *Manifest) add(r *Row) {
	m.Total.add(r)
	if m.ByRole[r.Role] == nil {
		m.ByRole[r.Role] = &Counts{}
	}
	m.ByRole[r.Role].add(r)
	tc := m.taskCounts(r.Task)
	tc.add(r)
	if tc.ByRole[r.Role] == nil {
		tc.ByRole[r.Role] = &Counts{}
	}
	tc.ByRole[r.Role].add(r)
}

func (m *Manifest) taskCounts(task string) *TaskCounts {
	tc := m.ByTask[task]
	if tc == nil {
		tc = &TaskCounts{ByRole: map[string]*Counts{}}
		m.ByTask[task] = tc
	}
	return tc
}

// ReadManifest reads dir/manifest.json.
func ReadManifest(dir string) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return nil, fmt.Errorf("read manifest: %w", err)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("decode %s/manifest.json: %w", dir, err)
	}
	return &m, nil
}

// ReadDataset loads a built dataset directory: its manifest and rows, from windows.bin when
// present, else from rows.jsonl.
func ReadDataset(dir string) ([]Row, *Manifest, error) {
	m, err := ReadManifest(dir)
	if err != nil {
		return nil, nil, err
	}
	if f, err := os.Open(filepath.Join(dir, "windows.bin")); err == nil {
		defer f.Close()
		rows, err := ReadBinary(f)
		return rows, m, err
	}
	f, err := os.Open(filepath.Join(dir, "rows.jsonl"))
	if err != nil {
		return nil, nil, fmt.Errorf("dataset %s has neither windows.bin nor rows.jsonl: %w", dir, err)
	}
	defer f.Close()
	rows, err := ReadRows(f)
	return rows, m, err
}
