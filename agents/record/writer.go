package record

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/mass-dev/mass/agents/internal/groupsync"
	"github.com/mass-dev/mass/errclass"
)

// ErrClosed is returned by Append after Close.
var ErrClosed = fmt.Errorf("recording %w", errclass.ErrClosed)

// Writer appends records to one api_requests.jsonl. Append is safe for
// concurrent use and returns once the line is fsynced; concurrent appends
// share one fsync (group commit), so a killed daemon loses at most the
// calls in flight.
type Writer struct {
	path    string
	episode string

	mu     sync.Mutex // guards f writes, seq, closed, broken
	f      *os.File
	seq    int64
	closed bool
	broken error

	group *groupsync.Group // fsyncs f; knows which seqs are durable
}

// Open opens (or creates) the recording at path. An existing file is read
// and its seq continued; a torn final line is cut off.
func Open(path, episode string) (*Writer, error) {
	return open(path, episode, os.O_CREATE)
}

// Reopen is Open for a recording that must already exist, as when closing
// the record of an interrupted episode: a missing file is an error wrapping
// fs.ErrNotExist, and nothing is created.
func Reopen(path, episode string) (*Writer, error) {
	return open(path, episode, 0)
}

func open(path, episode string, create int) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_RDWR|create, 0o640)
	if err != nil {
		return nil, fmt.Errorf("open recording %s: %w", path, err)
	}
	recs, good, err := scan(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open recording %s: %w", path, err)
	}
	if err := f.Truncate(good); err != nil {
		f.Close()
		return nil, fmt.Errorf("cut torn tail of %s: %w", path, err)
	}
	if _, err := f.Seek(good, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("seek %s: %w", path, err)
	}
	w := &Writer{path: path, episode: episode, f: f}
	if n := len(recs); n > 0 {
		w.seq = recs[n-1].Seq
	}
	w.group = groupsync.New(f, w.seq)
	return w, nil
}

// Append assigns r's Seq (and Episode, and TSEnd when zero) and writes it.
// It returns the assigned seq once the line is durable.
func (w *Writer) Append(r Record) (int64, error) {
	r.Episode = w.episode
	if r.TSEnd.IsZero() {
		r.TSEnd = time.Now()
	}
	r.TS, r.TSEnd = r.TS.UTC(), r.TSEnd.UTC()
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return 0, ErrClosed
	}
	if w.broken != nil {
		w.mu.Unlock()
		return 0, w.broken
	}
	if err := w.group.Err(); err != nil {
		w.mu.Unlock()
		return 0, fmt.Errorf("sync recording %s: %w", w.path, err)
	}
	r.Seq = w.seq + 1
	line, err := encode(r)
	if err != nil {
		w.mu.Unlock()
		return 0, fmt.Errorf("encode recording line: %w", err)
	}
	if _, err := w.f.Write(line); err != nil {
		w.broken = fmt.Errorf("write recording %s: %w", w.path, err)
		w.mu.Unlock()
		return 0, w.broken
	}
	w.seq = r.Seq
	w.group.Written(r.Seq)
	w.mu.Unlock()
	if err := w.group.Wait(r.Seq); err != nil {
		return r.Seq, fmt.Errorf("sync recording %s: %w", w.path, err)
	}
	return r.Seq, nil
}

// Seq is the last assigned seq.
func (w *Writer) Seq() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seq
}

// Close syncs and closes the file. Further appends fail with ErrClosed.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	return w.group.Close()
}

// scan reads the records in f and returns them with the byte length of the
// well-formed prefix (every complete, parseable line).
func scan(f io.Reader) ([]Record, int64, error) {
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, 0, err
	}
	recs, good, err := parse(b)
	return recs, int64(good), err
}

// parse decodes complete lines. An unterminated or unparseable final line
// is torn (not counted in good); a bad line before the end is an error.
func parse(b []byte) ([]Record, int, error) {
	var recs []Record
	good := 0
	for n := 1; good < len(b); n++ {
		i := bytes.IndexByte(b[good:], '\n')
		if i < 0 {
			return recs, good, nil // torn tail
		}
		line := b[good : good+i]
		r, err := decodeLine(line)
		if err != nil {
			if good+i+1 == len(b) {
				return recs, good, nil // a garbled last line is a torn write
			}
			return nil, 0, fmt.Errorf("line %d: %w", n, err)
		}
		if want := int64(len(recs) + 1); r.Seq != want {
			return nil, 0, fmt.Errorf("line %d: seq %d, want %d (records must be gap-free)", n, r.Seq, want)
		}
		recs = append(recs, r)
		good += i + 1
	}
	return recs, good, nil
}
