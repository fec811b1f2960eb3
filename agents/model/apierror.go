package model

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ErrAuth marks an endpoint that refused the API key (HTTP 401 or 403).
// It is never retried; the message names the provider and the key's source.
var ErrAuth = errors.New("model endpoint refused the API key")

// APIError is an error reply of a provider's HTTP API, decoded from the
// provider's own error body.
type APIError struct {
	Provider   string
	Model      string // the configured model name
	Status     int
	Type       string // the provider's error type or code: rate_limit_error, invalid_api_key, …
	Message    string // the provider's message, the API key (if echoed) redacted
	RequestID  string
	RetryAfter time.Duration // retry-after-ms or retry-after; 0 when absent
	KeySource  string        // "api_key_env ANTHROPIC_API_KEY", for the hint on ErrAuth
	// ShouldRetry is the server's x-should-retry header when it sent one;
	// it overrides the status (both vendors' SDKs honour it).
	ShouldRetry *bool
}

// ShouldRetryHeader reads x-should-retry: "true" or "false", else nil.
func ShouldRetryHeader(h http.Header) *bool {
	switch h.Get("X-Should-Retry") {
	case "true":
		t := true
		return &t
	case "false":
		f := false
		return &f
	}
	return nil
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (model %s): HTTP %d", e.Provider, e.Model, e.Status)
	if e.Type != "" {
		b.WriteString(" " + e.Type)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.RequestID != "" {
		b.WriteString(" (request " + e.RequestID + ")")
	}
	if e.auth() {
		src := e.KeySource
		if src == "" {
			src = "no api_key_env or api_key_file"
		}
		fmt.Fprintf(&b, "; the %s API key was refused: check %s", e.Provider, src)
	}
	return b.String()
}

func (e *APIError) auth() bool {
	return e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden
}

// Is makes errors.Is(err, ErrAuth) hold for a refused key.
func (e *APIError) Is(target error) bool { return target == ErrAuth && e.auth() }

// Temporary reports the statuses worth a retry: 408, 409, 429 and 5xx
// (Anthropic's 529 overloaded among them), unless x-should-retry says
// otherwise; a refused key is never retried.
func (e *APIError) Temporary() bool {
	if e.ShouldRetry != nil && !e.auth() {
		return *e.ShouldRetry
	}
	switch e.Status {
	case http.StatusRequestTimeout, http.StatusConflict, http.StatusTooManyRequests:
		return true
	}
	return e.Status >= 500
}

// MaxRetryAfter caps a server's retry-after.
const MaxRetryAfter = 2 * time.Minute

// RetryAfter reads retry-after-ms (OpenAI) or retry-after (seconds or an
// HTTP date); 0 when absent or unreadable.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	var d time.Duration
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			d = time.Duration(ms * float64(time.Millisecond))
		}
	} else if v := h.Get("Retry-After"); v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 {
			d = time.Duration(s * float64(time.Second))
		} else if t, err := http.ParseTime(v); err == nil {
			d = t.Sub(now)
		}
	}
	return min(max(d, 0), MaxRetryAfter)
}

// KeySource names where cfg's key comes from, never the key.
func (c Config) KeySource() string {
	var s []string
	if c.APIKeyEnv != "" {
		s = append(s, "api_key_env "+c.APIKeyEnv)
	}
	if c.APIKeyFile != "" {
		s = append(s, "api_key_file "+c.APIKeyFile)
	}
	return strings.Join(s, " / ")
}

// Redact removes key from s (a provider may echo the key it refused).
func Redact(s, key string) string {
	if len(key) < 4 {
		return s
	}
	return strings.ReplaceAll(s, key, "[redacted]")
}
