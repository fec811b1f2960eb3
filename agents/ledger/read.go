package ledger

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/mass-dev/mass/errclass"
)

// MaxLineBytes caps one ledger line; a longer line is an error, not an
// allocation the size of the input.
const MaxLineBytes = 16 << 20

// ErrInvalid classes every error about a ledger's content (class
// errclass.ErrInvalid).
var ErrInvalid = errclass.New("invalid ledger", errclass.ErrInvalid)

// LineError names the first bad line of a ledger (1-based).
type LineError struct {
	Line   int
	Seq    int64 // the record's seq when it could be parsed, else 0
	Reason string
}

func (e *LineError) Error() string {
	if e.Seq > 0 {
		return fmt.Sprintf("ledger line %d (seq %d): %s", e.Line, e.Seq, e.Reason)
	}
	return fmt.Sprintf("ledger line %d: %s", e.Line, e.Reason)
}

// Is makes errors.Is(err, ErrInvalid) true for a LineError.
func (e *LineError) Is(target error) bool { return target == ErrInvalid }

// lines calls fn for each line of r (without its newline). last is true for
// an unterminated final line. Empty lines are passed through so callers can
// reject them with a line number.
func lines(r io.Reader, fn func(n int, line []byte, terminated bool) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	n := 0
	for {
		line, err := readLine(br)
		if len(line) == 0 && err == io.EOF {
			return nil
		}
		n++
		if errors.Is(err, errLineTooLong) {
			return &LineError{Line: n, Reason: fmt.Sprintf("longer than %d bytes", MaxLineBytes)}
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("read ledger line %d: %w", n, err)
		}
		if ferr := fn(n, line, err == nil); ferr != nil {
			return ferr
		}
		if err == io.EOF {
			return nil
		}
	}
}

var errLineTooLong = errors.New("line too long")

// readLine returns one line without its '\n'; err is io.EOF when the line
// was not terminated (possibly empty at the end of input).
func readLine(br *bufio.Reader) ([]byte, error) {
	var out []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(out)+len(chunk) > MaxLineBytes+1 {
			return nil, errLineTooLong
		}
		out = append(out, chunk...)
		switch {
		case err == nil:
			return out[:len(out)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return out, err
		}
	}
}

// parseLine decodes one line into a Record, rejecting blank lines and
// trailing data.
func parseLine(n int, line []byte) (Record, error) {
	var rec Record
	if len(bytes.TrimSpace(line)) == 0 {
		return rec, &LineError{Line: n, Reason: "empty line"}
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	if err := dec.Decode(&rec); err != nil {
		return rec, &LineError{Line: n, Reason: fmt.Sprintf("not a ledger record: %v", err)}
	}
	if _, err := dec.Token(); err != io.EOF {
		return rec, &LineError{Line: n, Seq: rec.Seq, Reason: "trailing data after the record"}
	}
	return rec, nil
}

// Read parses every record of a ledger without checking the chain (use
// Verify for that). An unterminated final line is accepted when it parses.
func Read(r io.Reader) ([]Record, error) {
	var out []Record
	err := lines(r, func(n int, line []byte, _ bool) error {
		rec, err := parseLine(n, line)
		if err != nil {
			return err
		}
		out = append(out, rec)
		return nil
	})
	return out, err
}

// chain checks records one line at a time.
type chain struct {
	episode string
	prev    string
	seq     int64
}

func newChain(episode string) *chain {
	return &chain{episode: episode, prev: Genesis(episode)}
}

// check verifies line n against the chain so far and advances it.
func (c *chain) check(n int, line []byte) (Record, error) {
	rec, err := parseLine(n, line)
	if err != nil {
		return rec, err
	}
	bad := func(format string, a ...any) error {
		return &LineError{Line: n, Seq: rec.Seq, Reason: fmt.Sprintf(format, a...)}
	}
	if rec.Episode != c.episode {
		return rec, bad("episode %q, want %q", rec.Episode, c.episode)
	}
	if rec.Seq != c.seq+1 {
		return rec, bad("seq %d, want %d (record dropped, inserted or reordered)", rec.Seq, c.seq+1)
	}
	if rec.Prev != c.prev {
		return rec, bad("prev does not match the previous record's hash (record dropped, inserted or reordered)")
	}
	want, err := HashLine(c.prev, line)
	if err != nil {
		return rec, bad("%v", err)
	}
	if rec.Hash != want {
		return rec, bad("hash mismatch (record edited)")
	}
	c.prev, c.seq = rec.Hash, rec.Seq
	return rec, nil
}

// Verify checks the whole hash chain of a ledger for episode and returns the
// number of valid records. Any edited, dropped, reordered or inserted record,
// and any line that is not a record (including a torn final line), is
// reported as a *LineError naming the first bad line. An empty episode takes
// the first record's. Truncation after the last record cannot be seen from
// the chain alone; compare the count or Writer.Head with an outside copy.
func Verify(r io.Reader, episode string) (int, error) {
	var c *chain
	valid := 0
	err := lines(r, func(n int, line []byte, terminated bool) error {
		if c == nil {
			ep := episode
			if ep == "" {
				rec, err := parseLine(n, line)
				if err != nil {
					return err
				}
				ep = rec.Episode
			}
			c = newChain(ep)
		}
		if _, err := c.check(n, line); err != nil {
			return err
		}
		if !terminated {
			return &LineError{Line: n, Seq: c.seq, Reason: "final line has no newline (torn write)"}
		}
		valid++
		return nil
	})
	return valid, err
}
