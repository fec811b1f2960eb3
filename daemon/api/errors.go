package api

import (
	"errors"
	"net/http"

	"github.com/mass-dev/mass/errclass"
)

// Error classes: those of package errclass, which every component wraps.
// This file is the only place that maps them to status codes; the client
// maps the codes back, so errors.Is works on both sides of the socket.
var (
	ErrNotFound     = errclass.ErrNotFound
	ErrInvalid      = errclass.ErrInvalid
	ErrConflict     = errclass.ErrConflict
	ErrUnavailable  = errclass.ErrUnavailable
	ErrUnauthorized = errclass.ErrUnauthorized
	ErrTooLarge     = errclass.ErrTooLarge
	ErrDenied       = errclass.ErrDenied
	ErrTimeout      = errclass.ErrTimeout
	ErrClosed       = errclass.ErrClosed
)

var classes = []struct {
	err    error
	code   string
	status int
}{
	{ErrNotFound, "not_found", http.StatusNotFound},
	{ErrInvalid, "invalid", http.StatusBadRequest},
	{ErrConflict, "conflict", http.StatusConflict},
	{ErrUnavailable, "unavailable", http.StatusServiceUnavailable},
	{ErrUnauthorized, "unauthorized", http.StatusUnauthorized},
	{ErrTooLarge, "too_large", http.StatusRequestEntityTooLarge},
	{ErrDenied, "denied", http.StatusForbidden},
	{ErrTimeout, "timeout", http.StatusGatewayTimeout},
	// A closed component (massd shutting down) is a retry-later condition
	// for the caller, as unavailable is; its own code keeps the class.
	{ErrClosed, "closed", http.StatusServiceUnavailable},
}

// StatusOf maps err to an HTTP status and an error code.
func StatusOf(err error) (int, string) {
	for _, c := range classes {
		if errors.Is(err, c.err) {
			return c.status, c.code
		}
	}
	return http.StatusInternalServerError, "internal"
}

// ClassOf maps an error code from a response body back to its class; nil for
// unknown codes (internal, method_not_allowed).
func ClassOf(code string) error {
	for _, c := range classes {
		if c.code == code {
			return c.err
		}
	}
	return nil
}

// ClassOfStatus maps a status back to a class, for a response whose body
// carries no code (a proxy's error page): the first class with that
// status, so 503 reads as ErrUnavailable; nil for 500 and unmapped ones.
func ClassOfStatus(status int) error {
	for _, c := range classes {
		if c.status == status {
			return c.err
		}
	}
	return nil
}
