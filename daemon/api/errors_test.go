package api

import (
	"fmt"
	"net/http"
	"testing"
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

// StatusOfClass is StatusOf for a bare class.
func StatusOfClass(err error) int { s, _ := StatusOf(err); return s }
