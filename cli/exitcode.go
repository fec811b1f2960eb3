package cli

import (
	"errors"
	"fmt"
	"strings"

	urfave "github.com/urfave/cli/v2"

	"github.com/mass-dev/mass/daemon/client"
	"github.com/mass-dev/mass/errclass"
)

// massctl's exit codes, documented in README.md: a script can tell a usage
// error from a missing thing, a dead daemon and a job that did not succeed.
const (
	ExitError     = 1 // anything else
	ExitUsage     = 2 // bad flags or arguments, an invalid spec or request
	ExitNotFound  = 3 // the named task, job, episode, … does not exist
	ExitNoDaemon  = 4 // nothing answered on the socket or address
	ExitJobFailed = 5 // the job or episode ran and did not succeed
)

// ErrJobFailed marks a followed job (or episode) that ended without
// succeeding: failed, cancelled or interrupted.
var ErrJobFailed = errors.New("job did not succeed")

// jobFailed is an error saying how a job ended, with exit code 5.
func jobFailed(format string, args ...any) error {
	return classed(ErrJobFailed, format, args...)
}

// classed is an error with the message given that matches class, without
// the class's own text appended to what the user reads.
func classed(class error, format string, args ...any) error {
	return &classedError{msg: fmt.Sprintf(format, args...), class: class}
}

type classedError struct {
	msg   string
	class error
}

func (e *classedError) Error() string { return e.msg }
func (e *classedError) Unwrap() error { return e.class }

// usageError wraps a command-line mistake so it exits 2.
func usageError(format string, args ...any) error {
	return fmt.Errorf(format+": %w", append(args, errUsage)...)
}

var errUsage = fmt.Errorf("see --help (%w)", errclass.ErrInvalid)

// ExitCode is the exit status massctl ends with for err. Classes decide
// first (they survive the socket), then an explicit urfave exit code, then
// urfave's own flag errors, which are usage errors.
func ExitCode(err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, client.ErrNoDaemon):
		return ExitNoDaemon
	case errors.Is(err, ErrJobFailed):
		return ExitJobFailed
	case errors.Is(err, errclass.ErrNotFound):
		return ExitNotFound
	case errors.Is(err, errclass.ErrInvalid):
		return ExitUsage
	}
	var ec urfave.ExitCoder
	if errors.As(err, &ec) && ec.ExitCode() > 0 {
		return ec.ExitCode()
	}
	if flagError(err) {
		return ExitUsage
	}
	return ExitError
}

// flagError reports an error of urfave's flag parsing or its required-flag
// check, which it returns as plain errors.
func flagError(err error) bool {
	s := err.Error()
	for _, p := range []string{"flag provided but not defined", "Required flag", "invalid value", "flag needs an argument", "invalid boolean"} {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}
