package server

import (
	"bytes"
	"strings"
	"testing"
)

// Also-list: a wrong method answered 404 as if the route did not exist.
func TestWrongMethodIs405(t *testing.T) {
	s, _ := newTestServer(t)
	h := s.Handler()
	for _, tc := range []struct{ method, path, allow string }{
		{"DELETE", "/v1/tasks", "GET, POST"},
		{"PUT", "/v1/jobs/j-1", "GET"},
		{"GET", "/v1/jobs/j-1/cancel", "POST"},
	} {
		rec := do(t, h, tc.method, tc.path, nil)
		if rec.Code != 405 || rec.Header().Get("Allow") != tc.allow {
			t.Errorf("%s %s = %d Allow %q, want 405 Allow %q", tc.method, tc.path, rec.Code, rec.Header().Get("Allow"), tc.allow)
		}
	}
	if rec := do(t, h, "GET", "/v1/nothing", nil); rec.Code != 404 {
		t.Errorf("unknown path = %d, want 404", rec.Code)
	}
}

// Also-list: trailing garbage after a JSON body was ignored.
func TestTrailingDataAfterJSONIsRefused(t *testing.T) {
	s, _ := newTestServer(t)
	h := s.Handler()
	for _, body := range []string{
		`{"kind":"wait","params":{"seconds":1}} {"kind":"wait"}`,
		`{"kind":"wait","params":{"seconds":1}}garbage`,
	} {
		rec := do(t, h, "POST", "/v1/jobs", bytes.NewBufferString(body))
		if rec.Code != 400 || !strings.Contains(rec.Body.String(), "trailing data") {
			t.Errorf("body %q = %d %s, want 400 trailing data", body, rec.Code, rec.Body)
		}
	}
	if rec := do(t, h, "POST", "/v1/jobs", bytes.NewBufferString(`{"kind":"wait","params":{"seconds":1}}`+"\n")); rec.Code != 201 && rec.Code != 200 {
		t.Errorf("a clean body = %d %s", rec.Code, rec.Body)
	}
}
