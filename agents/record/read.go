package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// MaxFileBytes bounds a recording that Read accepts.
const MaxFileBytes = 4 << 30

// ReadFile reads a recording, ignoring a torn final line.
func ReadFile(path string) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open recording: %w", err)
	}
	defer f.Close()
	return Read(f)
}

// Read parses a recording: every complete line must be one Record with seq
// 1, 2, 3…; a torn final line (unterminated or garbled) is ignored.
func Read(r io.Reader) ([]Record, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read recording: %w", err)
	}
	if len(b) > MaxFileBytes {
		return nil, fmt.Errorf("read recording: larger than %d bytes", MaxFileBytes)
	}
	recs, _, err := parse(b)
	if err != nil {
		return nil, fmt.Errorf("read recording: %w", err)
	}
	return recs, nil
}

func decodeLine(line []byte) (Record, error) {
	var r Record
	dec := json.NewDecoder(bytes.NewReader(line))
	if err := dec.Decode(&r); err != nil {
		return Record{}, fmt.Errorf("not a JSON record: %w", err)
	}
	if dec.More() {
		return Record{}, errors.New("trailing data after the JSON record")
	}
	if r.Seq < 1 {
		return Record{}, fmt.Errorf("seq %d must be at least 1", r.Seq)
	}
	if r.Status != StatusOK && r.Status != StatusError {
		return Record{}, fmt.Errorf("status %q must be ok or error", r.Status)
	}
	return r, nil
}

// Threads groups records by thread, in seq order.
func Threads(recs []Record) map[string][]Record {
	out := map[string][]Record{}
	for _, r := range recs {
		out[r.Thread] = append(out[r.Thread], r)
	}
	return out
}
