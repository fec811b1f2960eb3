package refimport

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mass-dev/mass/cycle/workflow"
)

// The reference's two design markers in an initial file: the header that
// opens the team design, and the team-log request that follows it.
const (
	DesignMarker = workflow.Header
	LogMarker    = "In logs.txt, Document all created and spawned agents"
	// EndMarker ends the design block for the reference's query template
	// split (its last occurrence; cycle/search.EndMarker).
	EndMarker = "Use uv for all Python workflows"
)

// MaxQueryBytes caps one query or initial file.
const MaxQueryBytes = 256 << 10

// Initial is an initial _ourTeam file cut at its design: Before + Design +
// After is the file, byte for byte.
type Initial struct {
	Before string // the task text before the design
	Design string // from the header through the agents' closing ']'
	After  string // everything after the design (the reference's trailer)
	Agents int
}

// checkText refuses what cannot be a prompt: empty, not UTF-8, NUL bytes,
// over MaxQueryBytes.
func checkText(what string, b []byte) error {
	switch {
	case len(b) > MaxQueryBytes:
		return fmt.Errorf("%s is %d bytes; the limit is %d", what, len(b), MaxQueryBytes)
	case strings.TrimSpace(string(b)) == "":
		return fmt.Errorf("%s is empty", what)
	case !utf8.Valid(b):
		return fmt.Errorf("%s is not UTF-8 text", what)
	case strings.ContainsRune(string(b), 0):
		return fmt.Errorf("%s contains a NUL byte", what)
	}
	return nil
}

// ParseInitial cuts an initial file at its design: the first design marker,
// then one JSON array of agents that must parse as a mass workflow.
func ParseInitial(b []byte) (Initial, error) {
	if err := checkText("initial file", b); err != nil {
		return Initial{}, err
	}
	text := string(b)
	start := strings.Index(text, DesignMarker)
	if start < 0 {
		return Initial{}, fmt.Errorf("initial file has no design: the line %q is missing", DesignMarker)
	}
	rest := text[start+len(DesignMarker):]
	open := strings.IndexByte(rest, '[')
	if open < 0 || strings.TrimSpace(rest[:open]) != "" {
		return Initial{}, fmt.Errorf("initial file: a JSON array of agents must follow %q", DesignMarker)
	}
	dec := json.NewDecoder(strings.NewReader(rest[open:]))
	var arr json.RawMessage
	if err := dec.Decode(&arr); err != nil {
		return Initial{}, fmt.Errorf("initial file design: %w", err)
	}
	end := start + len(DesignMarker) + open + int(dec.InputOffset())
	in := Initial{Before: text[:start], Design: text[start:end], After: text[end:]}
	w, err := workflow.Parse(in.Design)
	if err != nil {
		return Initial{}, fmt.Errorf("initial file design: %w", err)
	}
	in.Agents = len(w.Agents)
	return in, nil
}

// ParseBare checks a bare query; its bytes are the prompt unchanged.
func ParseBare(b []byte) (string, error) {
	if err := checkText("bare query", b); err != nil {
		return "", err
	}
	if strings.Contains(string(b), DesignMarker) {
		return "", fmt.Errorf("bare query holds a design (%q); the design belongs in the initial file", DesignMarker)
	}
	return string(b), nil
}
