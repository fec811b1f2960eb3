package taskspec

import (
	"errors"
	"fmt"
	"strings"
)

// FieldError is one problem in a spec, located by line and field path.
type FieldError struct {
	File  string // spec file name, empty when parsed from bytes
	Line  int    // 1-based; 0 when unknown
	Field string // dotted path, e.g. "limits.cpus" or "inputs[1].path"
	Msg   string // what is wrong and how to fix it
}

func (e *FieldError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(":")
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, "%d:", e.Line)
	}
	if b.Len() > 0 {
		b.WriteString(" ")
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors is every problem found in one spec, in document order.
type Errors []*FieldError

func (es Errors) Error() string {
	msgs := make([]string, len(es))
	for i, e := range es {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "\n")
}

func (es Errors) withFile(name string) Errors {
	for _, e := range es {
		e.File = name
	}
	return es
}

// Messages lists the problems in err, one per entry: each FieldError of an
// Errors in it, else err's own message.
func Messages(err error) []string {
	var es Errors
	if !errors.As(err, &es) {
		return []string{err.Error()}
	}
	msgs := make([]string, len(es))
	for i, e := range es {
		msgs[i] = e.Error()
	}
	return msgs
}
