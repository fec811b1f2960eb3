package rank

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// MaxMatchLine is the longest matches-file line read (rationales can be long).
const MaxMatchLine = 16 << 20

// matchRow is a matches-file row; other fields (rationale, model, seed,
// metrics) are ignored.
type matchRow struct {
	A      *string         `json:"a"`
	B      *string         `json:"b"`
	Winner json.RawMessage `json:"winner"`
}

// ParseWinner reads a verdict's winner field for the pair (a, b): a's id
// or "A" means a won, b's id or "B" means b won, "tie" is a tie; ids are
// matched first. ok is false for anything else ("error", "", another
// id): an invalid judgment, to be excluded and counted, never a tie.
func ParseWinner(a, b, winner string) (o Outcome, ok bool) {
	switch winner {
	case a:
		return AWins, true
	case b:
		return BWins, true
	case "A":
		return AWins, true
	case "B":
		return BWins, true
	case "tie":
		return Tie, true
	}
	return 0, false
}

// ReadMatches reads JSONL rows {"a","b","winner",…} such as the
// reference's task{q}_matches.jsonl. Blank lines are skipped. A row whose
// winner is not valid (see ParseWinner; also a missing, null or non-string
// winner) is excluded and counted in excluded. A line that is not a JSON
// object, or lacks a or b as distinct non-empty strings, is an error
// naming the line: the file is damaged.
func ReadMatches(r io.Reader) (matches []Match, excluded int, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxMatchLine)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		m, ok, err := parseMatchLine(b)
		if err != nil {
			return nil, 0, fmt.Errorf("matches line %d: %w", line, err)
		}
		if !ok {
			excluded++
			continue
		}
		matches = append(matches, m)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, 0, fmt.Errorf("matches line %d: longer than %d bytes", line+1, MaxMatchLine)
		}
		return nil, 0, fmt.Errorf("read matches: %w", err)
	}
	return matches, excluded, nil
}

func parseMatchLine(b []byte) (Match, bool, error) {
	if b[0] != '{' {
		return Match{}, false, errors.New(`not a JSON object; want {"a":ID,"b":ID,"winner":…}`)
	}
	var row matchRow
	if err := json.Unmarshal(b, &row); err != nil {
		return Match{}, false, fmt.Errorf("parse: %w", err)
	}
	switch {
	case row.A == nil || row.B == nil:
		return Match{}, false, errors.New(`missing "a" or "b"`)
	case *row.A == "" || *row.B == "":
		return Match{}, false, errors.New(`empty "a" or "b"`)
	case *row.A == *row.B:
		return Match{}, false, fmt.Errorf("episode %q compared with itself", *row.A)
	}
	var w string
	if err := json.Unmarshal(row.Winner, &w); err != nil || len(row.Winner) == 0 {
		return Match{}, false, nil // null, a number, absent: not a verdict
	}
	o, ok := ParseWinner(*row.A, *row.B, w)
	return Match{A: *row.A, B: *row.B, Winner: o}, ok, nil
}
