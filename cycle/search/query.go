package search

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mass-dev/mass/cycle/workflow"
)

// MaxQueryBytes caps a query template file.
const MaxQueryBytes = 256 << 10

// QueryTemplate is a reference query file (tasks/initial/query{q}_ourTeam.txt)
// split on its two markers as the reference's _read_query_template does:
// Before is everything before the first design marker, Design the text
// from it to the last end marker (white space trimmed), After everything
// from the last end marker on.
type QueryTemplate struct {
	Raw    string
	Before string
	Design string
	After  string
}

// ParseQueryTemplate splits a query file on workflow.Header and the last
// EndMarker.
func ParseQueryTemplate(raw string) (QueryTemplate, error) {
	switch {
	case len(raw) > MaxQueryBytes:
		return QueryTemplate{}, fmt.Errorf("query template is %d bytes, more than %d", len(raw), MaxQueryBytes)
	case !utf8.ValidString(raw):
		return QueryTemplate{}, errors.New("query template is not UTF-8 text")
	case strings.ContainsRune(raw, 0):
		return QueryTemplate{}, errors.New("query template contains a NUL byte")
	}
	start := strings.Index(raw, workflow.Header)
	if start < 0 {
		return QueryTemplate{}, fmt.Errorf("query template: start marker %q not found", workflow.Header)
	}
	// The last end marker: the phrase can also appear inside the design.
	end := strings.LastIndex(raw, EndMarker)
	if end < 0 {
		return QueryTemplate{}, fmt.Errorf("query template: end marker %q not found", EndMarker)
	}
	if end <= start {
		return QueryTemplate{}, fmt.Errorf("query template: end marker %q occurs before the start marker", EndMarker)
	}
	return QueryTemplate{Raw: raw, Before: raw[:start], Design: strings.TrimFunc(raw[start:end], pySpace), After: raw[end:]}, nil
}

// TaskText is the task as the reference's evaluator and optimizer read
// it: the text before the design, escaped newlines ("\n" written as two
// characters) turned into newlines, white space trimmed.
func (t QueryTemplate) TaskText() string { return taskText(t.Before) }

func taskText(s string) string {
	s = strings.TrimRightFunc(s, pySpace)
	if strings.Contains(s, `\n`) {
		s = strings.ReplaceAll(s, `\n`, "\n")
	}
	return strings.TrimFunc(s, pySpace)
}

// Query is the query a design runs with: the template file itself for its
// own design (the reference runs its initial file as v0), else Render.
func (t QueryTemplate) Query(design string) string {
	if strings.TrimFunc(design, pySpace) == t.Design {
		return t.Raw
	}
	return t.Render(design)
}

// Teacher is a collection episode's prompt as the reference's pipeline
// writes it: the design's query, trailing white space removed, a blank
// line and the execution directive verbatim.
func (t QueryTemplate) Teacher(design, directive string) string {
	return strings.TrimRightFunc(t.Query(design), pySpace) + "\n\n" + directive
}

// Render is the query a version runs with: the text before the design,
// the design (trimmed), a blank line and the post-design suffix with its
// leading white space removed — the reference's _render_query_with_design.
func (t QueryTemplate) Render(design string) string {
	return t.Before + strings.TrimFunc(design, pySpace) + "\n\n" + strings.TrimLeftFunc(t.After, pySpace)
}

// BareTaskText is a bare query as the reference's generation and
// evaluation judges read it (tasks/bare/query{q}.txt): the text before
// the first end marker, escaped newlines turned into newlines, white
// space trimmed.
func BareTaskText(prompt string) string {
	if i := strings.Index(prompt, EndMarker); i >= 0 {
		prompt = prompt[:i]
	}
	return strings.TrimFunc(strings.ReplaceAll(prompt, `\n`, "\n"), pySpace)
}
