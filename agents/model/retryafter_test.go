package model

import (
	"net/http"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, c := range []struct {
		k, v string
		want time.Duration
	}{
		{"Retry-After", "1", time.Second},
		{"Retry-After", "0.5", 500 * time.Millisecond},
		{"Retry-After-Ms", "20", 20 * time.Millisecond},
		{"Retry-After", now.Add(3 * time.Second).Format(http.TimeFormat), 3 * time.Second},
		{"Retry-After", "99999", MaxRetryAfter},
		{"Retry-After", "soon", 0},
		{"Retry-After", "-4", 0},
	} {
		h := http.Header{}
		h.Set(c.k, c.v)
		if got := RetryAfter(h, now); got != c.want {
			t.Errorf("%s: %s = %v, want %v", c.k, c.v, got, c.want)
		}
	}
}

// FuzzRetryAfter: any header value gives a delay within [0, MaxRetryAfter].
func FuzzRetryAfter(f *testing.F) {
	f.Add("1", "")
	f.Add("", "1e309")
	f.Add("Wed, 21 Oct 2015 07:28:00 GMT", "NaN")
	f.Fuzz(func(t *testing.T, ra, ms string) {
		h := http.Header{}
		h.Set("Retry-After", ra)
		h.Set("Retry-After-Ms", ms)
		if d := RetryAfter(h, time.Now()); d < 0 || d > MaxRetryAfter {
			t.Fatalf("RetryAfter(%q, %q) = %v", ra, ms, d)
		}
	})
}

// TestShouldRetryHeader: x-should-retry overrides the status either way,
// but never makes a refused key retried.
func TestShouldRetryHeader(t *testing.T) {
	h := http.Header{}
	h.Set("X-Should-Retry", "false")
	if (&APIError{Status: 503, ShouldRetry: ShouldRetryHeader(h)}).Temporary() {
		t.Error("503 with x-should-retry: false is retried")
	}
	h.Set("X-Should-Retry", "true")
	if !(&APIError{Status: 400, ShouldRetry: ShouldRetryHeader(h)}).Temporary() {
		t.Error("400 with x-should-retry: true is not retried")
	}
	if (&APIError{Status: 401, ShouldRetry: ShouldRetryHeader(h)}).Temporary() {
		t.Error("a refused key is retried")
	}
	if ShouldRetryHeader(http.Header{}) != nil {
		t.Error("no header read as one")
	}
}
