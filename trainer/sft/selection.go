package sft

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
)

// MaxSelectionBytes caps a selection file.
const MaxSelectionBytes = 16 << 20

// Selection is a generation's choice of episodes (docs/formats.md):
// {"train": [ids], "val": [ids]}.
type Selection struct {
	Train []string `json:"train"`
	Val   []string `json:"val"`
}

// ParseSelection parses a selection file: one JSON object with train and
// val lists of distinct episode ids, no id in both, no unknown keys.
func ParseSelection(b []byte) (Selection, error) {
	var s Selection
	if len(b) > MaxSelectionBytes {
		return s, fmt.Errorf("selection is %d bytes; the limit is %d", len(b), MaxSelectionBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Selection{}, fmt.Errorf(`parse selection: %w (want {"train": [ids], "val": [ids]})`, err)
	}
	if dec.More() {
		return Selection{}, fmt.Errorf("parse selection: trailing data after the object")
	}
	seen := map[string]string{}
	for _, l := range []struct {
		name string
		ids  []string
	}{{"train", s.Train}, {"val", s.Val}} {
		for _, id := range l.ids {
			if id == "" || id != filepath.Base(id) || id == "." || id == ".." {
				return Selection{}, fmt.Errorf("selection %s: %q is not an episode id", l.name, id)
			}
			if prev, ok := seen[id]; ok {
				return Selection{}, fmt.Errorf("selection: episode %s appears in %s and %s", id, prev, l.name)
			}
			seen[id] = l.name
		}
	}
	if len(s.Train) == 0 {
		return Selection{}, fmt.Errorf("selection: the train list is empty")
	}
	return s, nil
}

// Split maps the selection onto episode directories (matched by base
// name); every selected id must be among dirs.
func (s Selection) Split(dirs []string) (train, val []string, err error) {
	byID := map[string]string{}
	for _, d := range dirs {
		byID[filepath.Base(d)] = d
	}
	pick := func(ids []string) ([]string, error) {
		var out []string
		for _, id := range ids {
			d, ok := byID[id]
			if !ok {
				return nil, fmt.Errorf("selected episode %s is not among the --episodes given", id)
			}
			out = append(out, d)
		}
		return out, nil
	}
	if train, err = pick(s.Train); err != nil {
		return nil, nil, err
	}
	if val, err = pick(s.Val); err != nil {
		return nil, nil, err
	}
	return train, val, nil
}
