package api

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/mass-dev/mass/errclass"
	"github.com/mass-dev/mass/sandbox"
)

func TestStatusRoundTrip(t *testing.T) {
	tests := []struct {
		err        error
		wantStatus int
		wantCode   string
	}{
		{fmt.Errorf("job x: %w", ErrNotFound), http.StatusNotFound, "not_found"},
		{fmt.Errorf("bad: %w", ErrInvalid), http.StatusBadRequest, "invalid"},
		{fmt.Errorf("dup: %w", ErrConflict), http.StatusConflict, "conflict"},
		{fmt.Errorf("busy: %w", ErrUnavailable), http.StatusServiceUnavailable, "unavailable"},
		{fmt.Errorf("who: %w", ErrUnauthorized), http.StatusUnauthorized, "unauthorized"},
		{fmt.Errorf("upload: %w", ErrTooLarge), http.StatusRequestEntityTooLarge, "too_large"},
		{fmt.Errorf("egress: %w", ErrDenied), http.StatusForbidden, "denied"},
		{fmt.Errorf("grade: %w", ErrTimeout), http.StatusGatewayTimeout, "timeout"},
		{fmt.Errorf("store: %w", ErrClosed), http.StatusServiceUnavailable, "closed"},
		{fmt.Errorf("disk on fire"), http.StatusInternalServerError, "internal"},
	}
	for _, tt := range tests {
		status, code := StatusOf(tt.err)
		if status != tt.wantStatus || code != tt.wantCode {
			t.Errorf("StatusOf(%v) = %d %s, want %d %s", tt.err, status, code, tt.wantStatus, tt.wantCode)
		}
		if class := ClassOf(code); code != "internal" && (class == nil || StatusOfClass(class) != status) {
			t.Errorf("ClassOf(%s) = %v", code, class)
		}
	}
	if ClassOf("bogus") != nil {
		t.Error("ClassOf(bogus) is not nil")
	}
}

// Every class of errclass has its own code and a status other than 500, and
// the code maps back to that very class (house issue: 4 of 9 were 500).
func TestEveryClassMapped(t *testing.T) {
	codes := map[string]bool{}
	for _, class := range errclass.All {
		status, code := StatusOf(fmt.Errorf("ctx: %w", class))
		if status == http.StatusInternalServerError || code == "internal" {
			t.Errorf("%v maps to %d %s", class, status, code)
		}
		if codes[code] {
			t.Errorf("code %s used twice", code)
		}
		codes[code] = true
		if back := ClassOf(code); back != class {
			t.Errorf("ClassOf(%s) = %v, want %v", code, back, class)
		}
	}
}

// StatusOfClass is StatusOf for a bare class.
func StatusOfClass(err error) int { s, _ := StatusOf(err); return s }

// A sandbox error reaching the API keeps its class: one vocabulary.
func TestSandboxErrorsMapToAPIClasses(t *testing.T) {
	tests := []struct {
		err  error
		want int
	}{
		{fmt.Errorf("create: %w", sandbox.ErrUnavailable), http.StatusServiceUnavailable},
		{fmt.Errorf("exec: %w", sandbox.ErrNotFound), http.StatusNotFound},
		{fmt.Errorf("spec: %w", sandbox.ErrInvalid), http.StatusBadRequest},
	}
	for _, tt := range tests {
		if got := StatusOfClass(tt.err); got != tt.want {
			t.Errorf("StatusOf(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
	if err := fmt.Errorf("create: %w", sandbox.ErrUnavailable); !errors.Is(err, ErrUnavailable) || ErrNotFound != errclass.ErrNotFound {
		t.Error("errors.Is fails across sandbox, api and errclass")
	}
}

// ClassOfStatus reads the class back from a bare status: every class's
// own status names a class with that status (503: ErrUnavailable, the
// first of the two), and statuses no class has name none.
func TestClassOfStatus(t *testing.T) {
	for _, class := range errclass.All {
		status, _ := StatusOf(class)
		back := ClassOfStatus(status)
		if back == nil || StatusOfClass(back) != status {
			t.Errorf("ClassOfStatus(%d) = %v, want a class with status %d (from %v)", status, back, status, class)
		}
	}
	if got := ClassOfStatus(http.StatusServiceUnavailable); got != ErrUnavailable {
		t.Errorf("ClassOfStatus(503) = %v, want ErrUnavailable", got)
	}
	for _, s := range []int{http.StatusInternalServerError, http.StatusBadGateway, http.StatusMethodNotAllowed, http.StatusOK} {
		if got := ClassOfStatus(s); got != nil {
			t.Errorf("ClassOfStatus(%d) = %v, want nil", s, got)
		}
	}
}
