package judge

import (
	"fmt"
	"strings"
)

// Render is the bundle as the evaluator reads it (docs/formats.md,
// "Evidence bundle"). Its section markers are stable: the scripted
// evaluator reads them.
func (b Bundle) Render() string {
	var s strings.Builder
	s.WriteString("### Deliverables preflight\n")
	if len(b.Preflight) == 0 {
		s.WriteString("(the task names no required outputs)\n")
	}
	for _, d := range b.Preflight {
		if d.OK() {
			fmt.Fprintf(&s, "- [x] %s: %s\n", d.Pattern, strings.Join(d.Found, ", "))
		} else {
			fmt.Fprintf(&s, "- [ ] %s: %s\n", d.Pattern, d.Note)
		}
	}
	fmt.Fprintf(&s, "\n### File tree (%d entries shown, %d omitted)\n", len(b.Tree), b.Omitted)
	for _, e := range b.Tree {
		switch e.Type {
		case "file":
			fmt.Fprintf(&s, "%s (%d bytes)\n", e.Path, e.Size)
		case "dir":
			fmt.Fprintf(&s, "%s/\n", e.Path)
		default:
			fmt.Fprintf(&s, "%s [%s, not followed]\n", e.Path, e.Type)
		}
	}
	if b.Truncated {
		s.WriteString("(the export holds more entries than were read)\n")
	}
	for _, e := range b.Excerpts {
		cut := ""
		if e.Truncated {
			cut = ", truncated"
		}
		fmt.Fprintf(&s, "\n### Excerpt %s (%s%s)\n```\n%s\n```\n", e.Path, e.Kind, cut, strings.ReplaceAll(e.Text, "```", "'''"))
	}
	return s.String()
}
