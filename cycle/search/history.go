package search

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// MaxHistoryLine caps one line of a history file.
const MaxHistoryLine = 4 << 20

// ReadHistory reads a history file (records/comparison_history.jsonl or
// records/champion_history.jsonl) as the reference does: blank lines and
// lines that are not a JSON object are skipped, unknown fields are
// ignored, a row needs only key and winner. A missing file is no rows.
// Mass's own fields that a foreign row lacks are filled in from its key.
func ReadHistory(path string) ([]Comparison, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", filepath.Base(path), err)
	}
	defer f.Close()
	rows, err := ParseHistory(f)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", filepath.Base(path), err)
	}
	return rows, nil
}

// ParseHistory is ReadHistory of an open stream.
func ParseHistory(r io.Reader) ([]Comparison, error) {
	var rows []Comparison
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), MaxHistoryLine)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var c Comparison
		if json.Unmarshal(line, &c) != nil {
			c = lenientRow(line)
		}
		if c.Key == "" {
			continue
		}
		rows = append(rows, fillFromKey(c))
	}
	if err := sc.Err(); err != nil {
		return rows, err
	}
	return rows, nil
}

// lenientRow keeps key and winner of an object whose other fields have
// types of their own (another writer's row).
func lenientRow(line []byte) Comparison {
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) != nil {
		return Comparison{}
	}
	var c Comparison
	_ = json.Unmarshal(m["key"], &c.Key)
	_ = json.Unmarshal(m["winner"], &c.Winner)
	_ = json.Unmarshal(m["rationale"], &c.Rationale)
	return c
}

// fillFromKey sets mass's candidate, opponent, against and outcome from
// the key and winner when the row does not carry them.
func fillFromKey(c Comparison) Comparison {
	if c.Candidate != "" {
		return c
	}
	outcome := map[string]string{WinB: OutcomeWin, WinA: OutcomeLoss}[c.Winner]
	if outcome == "" {
		outcome = OutcomeTie
	}
	c.Outcome = outcome
	if m := baselineKeyRE.FindStringSubmatch(c.Key); m != nil {
		k, _ := atoiSmall(m[1])
		c.Candidate, c.Opponent, c.Against, c.Iteration = slotName(k), "reference", AgainstReference, k
	} else if m := championKeyRE.FindStringSubmatch(c.Key); m != nil {
		a, _ := atoiSmall(m[1])
		k, _ := atoiSmall(m[2])
		c.Candidate, c.Opponent, c.Against, c.Iteration = slotName(k), slotName(a), AgainstChampion, k
	} else if m := adjacentKeyRE.FindStringSubmatch(c.Key); m != nil {
		a, _ := atoiSmall(m[1])
		k, _ := atoiSmall(m[2])
		c.Candidate, c.Opponent, c.Against, c.Iteration = slotName(k), slotName(a), AgainstPrevious, k
	}
	return c
}
