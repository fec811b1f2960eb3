package errclass

import (
	"fmt"
	"strings"
)

// FieldError is mass's one field error: a problem with one field of an
// input (a task spec, massd's config, a job's params), located by file and
// line where known, saying what is wrong and how to fix it. It is of class
// ErrInvalid.
type FieldError struct {
	File  string // input file name; empty when there is none
	Line  int    // 1-based; 0 when unknown
	Field string // dotted path, e.g. "limits.cpus" or "inputs[1].path"
	Msg   string // what is wrong and how to fix it
}

// Error reads "file:line: field: msg", leaving out what is unknown.
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

// Unwrap makes every field error of class ErrInvalid.
func (e *FieldError) Unwrap() error { return ErrInvalid }
