// Package helper is the file-operation protocol of mass-sandbox-helper, the
// static binary that runs inside every agent container, and its
// implementation. The host sends JSON Requests on stdin and reads JSON
// Responses from stdout (one per process with "op", length-prefixed frames
// over one long-lived process with "serve"), so the host never opens a path
// inside a workspace.
package helper

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/mass-dev/mass/sandbox"
)

// Ops understood by the helper.
const (
	OpRead     = "read"
	OpWrite    = "write"
	OpEdit     = "edit"
	OpList     = "list"
	OpGlob     = "glob"
	OpGrep     = "grep"
	OpStat     = "stat"
	OpManifest = "manifest"
)

// Caps on what a request may carry and a response may return.
const (
	MaxRequestBytes  = 80 << 20 // a write of MaxWriteBytes, JSON-encoded
	MaxWriteBytes    = 32 << 20
	MaxEditFileBytes = 16 << 20
	MaxReadBytes     = 2 << 20   // content returned by one read
	MaxScanBytes     = 64 << 20  // bytes a read scans for lines; beyond it the result is truncated
	MaxHashBytes     = 256 << 20 // larger files are reported with UnhashedPrefix instead of a sha256
	MaxLineChars     = 2000      // longer lines are cut in read results
	DefaultReadLines = 2000
	MaxListEntries   = 10000
	MaxGlobResults   = 5000
	MaxGrepMatches   = 2000
	MaxGrepLineChars = 500
	MaxGrepFileBytes = 8 << 20
	MaxManifest      = 100000
	MaxPathLen       = 4096
	MaxPatternLen    = 1000
	// MaxResponseBytes bounds the JSON the host accepts back.
	MaxResponseBytes = 16 << 20
)

// UnhashedPrefix starts the sha256 field of a file too large to hash within
// MaxHashBytes; the rest is its size. It never equals a real digest.
const UnhashedPrefix = "unhashed-too-large:"

// Request is one file operation.
type Request struct {
	Op         string `json:"op"`
	Path       string `json:"path,omitempty"`
	Offset     int    `json:"offset,omitempty"` // read: first line, 0-based
	Limit      int    `json:"limit,omitempty"`  // read: number of lines; 0 means DefaultReadLines
	Content    []byte `json:"content,omitempty"`
	Old        string `json:"old,omitempty"`
	New        string `json:"new,omitempty"`
	ReplaceAll bool   `json:"replace_all,omitempty"`
	Pattern    string `json:"pattern,omitempty"`
	Glob       string `json:"glob,omitempty"`
}

// Error kinds carried in Response.Kind; the host maps them to sandbox sentinels.
const (
	KindNotFound = "not_found"
	KindInvalid  = "invalid"
	KindTooLarge = "too_large"
	KindDenied   = "denied"
	KindOther    = "other"
)

// Response is the helper's answer. Exactly one payload field is set when OK.
type Response struct {
	OK        bool                `json:"ok"`
	Kind      string              `json:"kind,omitempty"`
	Error     string              `json:"error,omitempty"`
	Read      *sandbox.ReadResult `json:"read,omitempty"`
	Change    *sandbox.FileChange `json:"change,omitempty"`
	Entries   []sandbox.FileInfo  `json:"entries,omitempty"`
	Paths     []string            `json:"paths,omitempty"`
	Matches   []sandbox.GrepMatch `json:"matches,omitempty"`
	Info      *sandbox.FileInfo   `json:"info,omitempty"`
	Truncated bool                `json:"truncated,omitempty"`
}

// DecodeRequest reads one request of at most MaxRequestBytes.
func DecodeRequest(r io.Reader) (Request, error) {
	var req Request
	if err := decodeCapped(r, MaxRequestBytes, &req); err != nil {
		return Request{}, fmt.Errorf("decode request: %w", err)
	}
	if req.Op == "" {
		return Request{}, fmt.Errorf("decode request: missing op: %w", sandbox.ErrInvalid)
	}
	return req, nil
}

// DecodeResponse reads one response of at most MaxResponseBytes and turns a
// failed one into an error wrapping the matching sandbox sentinel.
func DecodeResponse(r io.Reader) (Response, error) {
	var resp Response
	if err := decodeCapped(r, MaxResponseBytes, &resp); err != nil {
		return Response{}, fmt.Errorf("decode helper response: %w", err)
	}
	if !resp.OK {
		return resp, resp.Err()
	}
	return resp, nil
}

// Err returns the error a failed response describes, or nil.
func (r Response) Err() error {
	if r.OK {
		return nil
	}
	msg := r.Error
	if msg == "" {
		msg = "helper reported failure"
	}
	return fmt.Errorf("%s: %w", msg, kindErr(r.Kind))
}

func kindErr(kind string) error {
	switch kind {
	case KindNotFound:
		return sandbox.ErrNotFound
	case KindInvalid:
		return sandbox.ErrInvalid
	case KindTooLarge:
		return sandbox.ErrTooLarge
	case KindDenied:
		return sandbox.ErrDenied
	}
	return errors.New("helper error")
}

func decodeCapped(r io.Reader, limit int64, v any) error {
	lr := &io.LimitedReader{R: r, N: limit + 1}
	dec := json.NewDecoder(lr)
	if err := dec.Decode(v); err != nil {
		if lr.N <= 0 {
			return fmt.Errorf("more than %d bytes: %w", limit, sandbox.ErrTooLarge)
		}
		return fmt.Errorf("%v: %w", err, sandbox.ErrInvalid)
	}
	if lr.N <= 0 {
		return fmt.Errorf("more than %d bytes: %w", limit, sandbox.ErrTooLarge)
	}
	return nil
}
