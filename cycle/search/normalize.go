package search

import (
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mass-dev/mass/cycle/workflow"
)

// EndMarker is the reference's end-of-design marker: the first words of the
// query text that follows the design block.
const EndMarker = "Use uv for all Python workflows"

// tailProbeChars is how much of the post-design text is looked for.
const tailProbeChars = 200

// ErrNoMarker is returned for a design that does not start with the
// design marker (workflow.Header).
var ErrNoMarker = errors.New("design must start with \"" + workflow.Header + "\"")

// NormalizeDesign keeps only the design block of an optimizer's design
// text, as the reference's _normalize_generated_design_block does: the
// text (white space trimmed) must start with the marker; when it contains
// the first 200 characters of the post-design text (after, leading white
// space removed) it is cut there; else an end marker in its last 30% cuts
// it. after may be empty (a task with no post-design text).
func NormalizeDesign(text, after string) (string, error) {
	t := strings.TrimFunc(text, pySpace)
	if !strings.HasPrefix(t, workflow.Header) {
		return "", ErrNoMarker
	}
	if probe := firstChars(strings.TrimLeftFunc(after, pySpace), tailProbeChars); probe != "" {
		if i := strings.Index(t, probe); i >= 0 {
			// The reference keeps what is left even when nothing is; an
			// empty design is refused here.
			if t = strings.TrimRightFunc(t[:i], pySpace); !strings.HasPrefix(t, workflow.Header) {
				return "", ErrNoMarker
			}
			return t, nil
		}
	}
	if i := strings.Index(t, EndMarker); i >= 0 && utf8.RuneCountInString(t[:i]) >= int(0.7*float64(utf8.RuneCountInString(t))) {
		t = strings.TrimRightFunc(t[:i], pySpace)
	}
	return t, nil
}

// pySpace is Python's str.isspace for one character (strip's set).
func pySpace(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) }

// firstChars is the first n characters (runes) of s, as Python's s[:n].
func firstChars(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}
