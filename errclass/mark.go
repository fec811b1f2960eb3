package errclass

import (
	"errors"
	"io/fs"
)

// Mark returns err with class added and its text unchanged: errors.Is then
// matches both err's own chain and class. Mark(nil, class) is nil.
func Mark(err, class error) error {
	if err == nil {
		return nil
	}
	return &marked{err: err, class: class}
}

// Missing marks an error that says a file does not exist (fs.ErrNotExist)
// with ErrNotFound; any other error is returned as it is.
func Missing(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return Mark(err, ErrNotFound)
	}
	return err
}

type marked struct{ err, class error }

func (e *marked) Error() string   { return e.err.Error() }
func (e *marked) Unwrap() []error { return []error{e.err, e.class} }
