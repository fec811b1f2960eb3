package taskspec

import (
	"errors"
	"strings"

	"github.com/mass-dev/mass/errclass"
)

// FieldError is one problem in a spec, located by line and field path:
// errclass.FieldError, mass's one field error.
type FieldError = errclass.FieldError

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
