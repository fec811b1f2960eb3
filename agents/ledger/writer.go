package ledger

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mass-dev/mass/agents/internal/groupsync"
	"github.com/mass-dev/mass/errclass"
)

// ErrClosed is returned by Append after Close.
var ErrClosed = fmt.Errorf("ledger %w", errclass.ErrClosed)

// TornSuffix names the side file that keeps a torn final line found on
// reopen, so that nothing is silently discarded.
const TornSuffix = ".torn"

// Writer appends records to one episode's ledger. It holds an exclusive
// flock on the file while open. Append is safe for concurrent use; each
// Append returns only after its line is fsynced (concurrent appends share
// one fsync), so a killed process loses at most the appends in flight.
type Writer struct {
	path    string
	episode string

	mu     sync.Mutex // guards f writes, seq, prev, closed, broken
	f      *os.File
	seq    int64
	prev   string
	closed bool
	broken error // a failed write leaves the tail unknown; refuse further appends

	group *groupsync.Group // fsyncs f; knows which seqs are durable

	torn int // bytes of a torn tail moved aside by Create
}

// Create opens the ledger at path for episode, creating it if needed. An
// existing ledger (a restart after a crash) is verified and the chain
// continues from its last record. A torn final line — unterminated or not
// JSON — is moved to path+TornSuffix and cut off; any other defect
// (edited, reordered, wrong episode) is an error and the file is untouched.
func Create(path, episode string) (*Writer, error) {
	return open(path, episode, os.O_CREATE)
}

// Reopen is Create for a ledger that must already exist, as when closing
// the record of an interrupted episode: a missing file is an error wrapping
// fs.ErrNotExist, and nothing is created.
func Reopen(path, episode string) (*Writer, error) {
	return open(path, episode, 0)
}

func open(path, episode string, create int) (*Writer, error) {
	if episode == "" {
		return nil, errors.New("create ledger: empty episode id")
	}
	f, err := os.OpenFile(path, os.O_RDWR|create|os.O_APPEND, 0o640)
	if err != nil {
		return nil, fmt.Errorf("open ledger %s: %w", path, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock ledger %s (another writer has it open?): %w", path, err)
	}
	w := &Writer{path: path, episode: episode, f: f, prev: Genesis(episode)}
	if err := w.recover(); err != nil {
		f.Close()
		return nil, err
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// recover reads an existing ledger, verifies it and positions the chain.
func (w *Writer) recover() error {
	if _, err := w.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("read ledger %s: %w", w.path, err)
	}
	c := newChain(w.episode)
	var good int64 // byte offset after the last good line
	var torn []byte
	var tornLine int
	err := lines(w.f, func(n int, line []byte, terminated bool) error {
		if torn != nil {
			// A bad line followed by more lines is not a torn tail.
			return &LineError{Line: tornLine, Reason: "unparseable record before the end of the ledger"}
		}
		if !terminated || !isRecordJSON(line) {
			torn = append([]byte{}, line...)
			if terminated {
				torn = append(torn, '\n')
			}
			tornLine = n
			return nil
		}
		if _, err := c.check(n, line); err != nil {
			return err
		}
		good += int64(len(line)) + 1
		return nil
	})
	if err != nil {
		return fmt.Errorf("reopen ledger %s: %w", w.path, err)
	}
	if torn != nil {
		w.torn = len(torn)
		if err := saveTorn(w.path+TornSuffix, torn); err != nil {
			return err
		}
		if err := w.f.Truncate(good); err != nil {
			return fmt.Errorf("truncate torn ledger %s: %w", w.path, err)
		}
		if err := w.f.Sync(); err != nil {
			return fmt.Errorf("sync ledger %s: %w", w.path, err)
		}
	}
	w.seq, w.prev = c.seq, c.prev
	w.group = groupsync.New(w.f, c.seq)
	return nil
}

// isRecordJSON reports whether line is a single JSON object that decodes as
// a Record; anything else at the tail is treated as a torn write.
func isRecordJSON(line []byte) bool {
	_, err := parseLine(1, line)
	return err == nil
}

// saveTorn appends the torn bytes to the side file, durably.
func saveTorn(path string, torn []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o640)
	if err != nil {
		return fmt.Errorf("save torn ledger tail %s: %w", path, err)
	}
	if _, err := f.Write(torn); err != nil {
		f.Close()
		return fmt.Errorf("save torn ledger tail %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync torn ledger tail %s: %w", path, err)
	}
	return f.Close()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open ledger dir %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync ledger dir %s: %w", dir, err)
	}
	return nil
}

// Append assigns r's Seq, Prev and Hash (and TS when zero, in UTC), forces
// its Episode, writes it as one line and returns once the line is durable.
// Detail, when set, must be valid JSON. The returned Record is what was
// written.
func (w *Writer) Append(r Record) (Record, error) {
	if len(r.Detail) > 0 && !validJSON(r.Detail) {
		return Record{}, fmt.Errorf("append ledger record: %w: detail is not valid JSON", ErrInvalid)
	}
	if math.IsNaN(r.DurationMS) || math.IsInf(r.DurationMS, 0) {
		return Record{}, fmt.Errorf("append ledger record: %w: duration_ms %v", ErrInvalid, r.DurationMS)
	}
	if r.TS.IsZero() {
		r.TS = time.Now()
	}
	r.TS = r.TS.UTC()
	r.Episode = w.episode

	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return Record{}, ErrClosed
	}
	if w.broken != nil {
		w.mu.Unlock()
		return Record{}, w.broken
	}
	if err := w.group.Err(); err != nil {
		w.mu.Unlock()
		return Record{}, fmt.Errorf("sync ledger %s: %w", w.path, err)
	}
	r.Seq, r.Prev, r.Hash = w.seq+1, w.prev, ""
	line, err := encodeLine(r)
	if err == nil {
		r.Hash, err = HashLine(r.Prev, line)
	}
	if err == nil {
		line, err = encodeLine(r)
	}
	if err != nil {
		w.mu.Unlock()
		return Record{}, fmt.Errorf("encode ledger record: %w", err)
	}
	line = append(line, '\n')
	if _, err := w.f.Write(line); err != nil {
		// The line may be partly written; the next reopen cuts it off.
		w.broken = fmt.Errorf("write ledger %s (reopen to recover): %w", w.path, err)
		w.mu.Unlock()
		return Record{}, w.broken
	}
	w.seq, w.prev = r.Seq, r.Hash
	w.group.Written(r.Seq)
	w.mu.Unlock()

	if err := w.group.Wait(r.Seq); err != nil {
		return Record{}, fmt.Errorf("sync ledger %s: %w", w.path, err)
	}
	return r, nil
}

// Head returns the seq and hash of the last record (0 and the genesis hash
// for an empty ledger). Stored elsewhere, it lets a verifier detect a
// truncated tail.
func (w *Writer) Head() (seq int64, hash string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seq, w.prev
}

// Torn returns how many bytes of a torn final line Create moved to
// path+TornSuffix (0 when the ledger ended cleanly); callers should log it.
func (w *Writer) Torn() int { return w.torn }

// Path returns the ledger's file path.
func (w *Writer) Path() string { return w.path }

// Close syncs and closes the ledger. Further Appends return ErrClosed.
func (w *Writer) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	w.mu.Unlock()
	if err := w.group.Close(); err != nil {
		return fmt.Errorf("close ledger %s: %w", w.path, err)
	}
	return nil
}

func validJSON(b []byte) bool {
	return len(bytes.TrimSpace(b)) > 0 && json.Valid(b)
}
