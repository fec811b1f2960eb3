// Package ledger writes and verifies an episode's ledger.jsonl: an
// append-only, hash-chained JSON Lines record of every tool call and file
// operation, from which the behavioural audit is computed.
package ledger

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// Lifecycle tools recorded beside the model-facing ones.
const (
	ToolAgentStart           = "agent_start"
	ToolAgentFinish          = "agent_finish"
	ToolProtectedWriteDenied = "protected_write_denied"
	ToolLoopHalt             = "loop_halt"
)

// GenesisPrefix is hashed with the episode id to give the first record's prev.
const GenesisPrefix = "mass-ledger-v1:"

// Record is one line of ledger.jsonl (docs/formats.md). Seq, Prev and Hash
// are assigned by Writer.Append; TS too when left zero.
type Record struct {
	Seq          int64           `json:"seq"`
	TS           time.Time       `json:"ts"`
	Episode      string          `json:"episode"`
	Agent        string          `json:"agent"`
	Tool         string          `json:"tool"`
	ArgsSHA256   string          `json:"args_sha256"`
	Path         string          `json:"path"`
	Bytes        int64           `json:"bytes"`
	SHA256Before string          `json:"sha256_before"`
	SHA256After  string          `json:"sha256_after"`
	OK           bool            `json:"ok"`
	ExitCode     int             `json:"exit_code"`
	Error        string          `json:"error"`
	DurationMS   float64         `json:"duration_ms"`
	Detail       json.RawMessage `json:"detail,omitempty"`
	Prev         string          `json:"prev"`
	Hash         string          `json:"hash"`
}

// Genesis returns the prev of an episode's first record: the hex sha256 of
// GenesisPrefix + episode.
func Genesis(episode string) string {
	sum := sha256.Sum256([]byte(GenesisPrefix + episode))
	return hex.EncodeToString(sum[:])
}

// Canonical returns the canonical JSON of a ledger line, the bytes that are
// hashed. It is defined on the JSON text, not on the Go struct, so that a
// verifier covers every field a line holds, known or not:
//
//   - the line must be one JSON object; its "hash" member is removed;
//   - objects are written with members sorted by key (byte order of the
//     UTF-8 key), duplicate keys keep the last value (as encoding/json does);
//   - no whitespace outside strings;
//   - strings are re-encoded the way encoding/json does with HTML escaping
//     off: `"` `\` and control characters escaped (\n \r \t, else \u00XX),
//     U+2028/U+2029 escaped, invalid UTF-8 replaced by U+FFFD, everything
//     else literal;
//   - numbers are kept exactly as written (the writer emits Go's shortest
//     float formatting), true/false/null literal.
func Canonical(line []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return nil, fmt.Errorf("parse record: %w", err)
	}
	if obj == nil {
		return nil, errors.New("parse record: not a JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("parse record: trailing data after the object")
	}
	delete(obj, "hash")
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(obj); err != nil {
		return nil, fmt.Errorf("encode canonical record: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// ChainHash returns hex sha256(prev + "\n" + canonical).
func ChainHash(prev string, canonical []byte) string {
	h := sha256.New()
	h.Write([]byte(prev))
	h.Write([]byte{'\n'})
	h.Write(canonical)
	return hex.EncodeToString(h.Sum(nil))
}

// HashLine computes the hash a ledger line should carry given its prev.
func HashLine(prev string, line []byte) (string, error) {
	c, err := Canonical(line)
	if err != nil {
		return "", err
	}
	return ChainHash(prev, c), nil
}

// encodeLine marshals r (struct field order, HTML escaping off) without a
// trailing newline.
func encodeLine(r Record) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
