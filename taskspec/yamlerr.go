package taskspec

import (
	"bytes"
	"strings"

	"gopkg.in/yaml.v3"
)

// syntaxError turns a YAML syntax error into a FieldError on the line at
// fault. yaml.v3 often reports the line where the enclosing block began,
// one or more lines early ("line 4: did not find expected key" for a
// misindented line 5), so the line is found again by parsing ever longer
// prefixes of the document: the first prefix that fails with the same
// complaint ends on the culprit (a prefix that fails otherwise, by ending
// inside a JSON object say, is passed over). A tab in a line's indentation
// is named as such; YAML indents with spaces only.
func syntaxError(data []byte, err error) *FieldError {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := yamlErrLine(err)
	lines := bytes.SplitAfter(data, []byte("\n"))
	// yaml reports at or before the culprit; a bounded look past it keeps
	// this cheap on a large spec.
	for k := line; line > 0 && k <= len(lines) && k < line+maxLookahead; k++ {
		var n yaml.Node
		perr := yaml.Unmarshal(bytes.Join(lines[:k], nil), &n)
		if perr != nil && stripLine(strings.TrimPrefix(perr.Error(), "yaml: ")) == stripLine(msg) {
			line = k
			break
		}
	}
	if line > 0 && line <= len(lines) {
		l := lines[line-1]
		indent := l[:len(l)-len(bytes.TrimLeft(l, " \t"))]
		if bytes.IndexByte(indent, '\t') >= 0 {
			return &FieldError{Line: line, Msg: "a tab character in the indentation; YAML indents with spaces only: replace the tab by spaces"}
		}
		msg = stripLine(msg)
	}
	return &FieldError{Line: line, Msg: "not valid YAML or JSON: " + msg}
}

// maxLookahead bounds the lines syntaxError parses past yaml's own line.
const maxLookahead = 64

// stripLine drops yaml's own "line N: " so the message does not name a
// second, different line.
func stripLine(msg string) string {
	if strings.HasPrefix(msg, "line ") {
		if i := strings.Index(msg, ": "); i > 0 {
			return msg[i+2:]
		}
	}
	return msg
}
