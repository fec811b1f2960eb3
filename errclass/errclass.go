// Package errclass is mass's one vocabulary of error classes. Every
// component wraps one of these sentinels with context
// (fmt.Errorf("job %s: %w", id, errclass.ErrNotFound)); callers test with
// errors.Is, whichever package the error came from. Only the API edge
// (daemon/api) maps classes to HTTP status codes. The package imports
// nothing of mass, so any package may use it.
package errclass

import "errors"

// The classes. A component may declare its own sentinel that wraps one of
// these to keep a more specific message (sandbox.ErrUnavailable reads
// "sandbox engine unavailable"); errors.Is then matches both.
var (
	// ErrNotFound: the named thing does not exist.
	ErrNotFound = errors.New("not found")
	// ErrInvalid: the request or input is malformed or out of range.
	ErrInvalid = errors.New("invalid argument")
	// ErrConflict: the request clashes with the current state (an id exists,
	// a job already finished).
	ErrConflict = errors.New("conflict")
	// ErrUnavailable: a dependency is down or the component is saturated;
	// retrying later may work.
	ErrUnavailable = errors.New("unavailable")
	// ErrUnauthorized: the caller did not authenticate.
	ErrUnauthorized = errors.New("unauthorized")
	// ErrTooLarge: the input or output exceeds a size cap.
	ErrTooLarge = errors.New("exceeds size cap")
	// ErrDenied: a policy forbids the operation.
	ErrDenied = errors.New("denied by policy")
	// ErrTimeout: the operation ran out of time.
	ErrTimeout = errors.New("timed out")
	// ErrClosed: the component was closed; no further calls succeed.
	ErrClosed = errors.New("closed")
)

// All lists every class, so an edge that maps classes (the API's status
// codes, massctl's exit codes) can test that it maps each one.
var All = []error{ErrNotFound, ErrInvalid, ErrConflict, ErrUnavailable,
	ErrUnauthorized, ErrTooLarge, ErrDenied, ErrTimeout, ErrClosed}

// New returns a component's own sentinel: its message is msg and it is of
// class class (errors.Is matches both), e.g.
// New("invalid ledger", ErrInvalid).
func New(msg string, class error) error { return &classed{msg: msg, class: class} }

type classed struct {
	msg   string
	class error
}

func (e *classed) Error() string { return e.msg }
func (e *classed) Unwrap() error { return e.class }
