package refimport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
)

// MaxSplitsBytes caps splits.json.
const MaxSplitsBytes = 1 << 20

// Default file patterns, as the reference's splits.json names them.
const (
	DefaultPromptPattern  = "bare/query{task_id}.txt"
	DefaultInitialPattern = "initial/query{task_id}_ourTeam.txt"
	patternSlot           = "{task_id}"
)

// Splits is the reference's tasks/splits.json.
type Splits struct {
	DesignatedTrain []int
	Test            []int
	SFTTrain        []int
	Excluded        map[int]string // query -> the reference's reason
	Domains         map[string][]int
	PromptPattern   string
	InitialPattern  string
	Ignored         []string // keys with no meaning here, sorted
}

// ParseSplits reads splits.json. Query numbers are positive integers of at
// most 9 digits; patterns are clean relative paths with one {task_id}.
func ParseSplits(data []byte) (*Splits, error) {
	if len(data) > MaxSplitsBytes {
		return nil, fmt.Errorf("splits.json is %d bytes; the limit is %d", len(data), MaxSplitsBytes)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("splits.json: %w", err)
	}
	if raw == nil {
		return nil, fmt.Errorf("splits.json: must be a JSON object")
	}
	s := &Splits{Excluded: map[int]string{}, Domains: map[string][]int{}, PromptPattern: DefaultPromptPattern, InitialPattern: DefaultInitialPattern}
	for key, v := range raw {
		var err error
		switch key {
		case "designated_train":
			s.DesignatedTrain, err = ids(v)
		case "test":
			s.Test, err = ids(v)
		case "sft_train":
			s.SFTTrain, err = ids(v)
		case "excluded_from_teacher_collection":
			err = s.excluded(v)
		case "domains":
			err = s.domains(v)
		case "task_prompt_pattern":
			s.PromptPattern, err = pattern(v)
		case "initial_workflow_pattern":
			s.InitialPattern, err = pattern(v)
		default:
			s.Ignored = append(s.Ignored, key)
		}
		if err != nil {
			return nil, fmt.Errorf("splits.json %s: %w", key, err)
		}
	}
	sort.Strings(s.Ignored)
	for _, q := range s.Test {
		if contains(s.DesignatedTrain, q) || contains(s.SFTTrain, q) {
			return nil, fmt.Errorf("splits.json: query %d is in test and in a training list", q)
		}
	}
	if len(s.All()) == 0 {
		return nil, fmt.Errorf("splits.json: names no task (designated_train, test, sft_train are empty)")
	}
	return s, nil
}

// All is every query splits.json names, ascending.
func (s *Splits) All() []int {
	set := map[int]bool{}
	for _, l := range [][]int{s.DesignatedTrain, s.Test, s.SFTTrain} {
		for _, q := range l {
			set[q] = true
		}
	}
	for q := range s.Excluded {
		set[q] = true
	}
	out := make([]int, 0, len(set))
	for q := range set {
		out = append(out, q)
	}
	sort.Ints(out)
	return out
}

func ids(v json.RawMessage) ([]int, error) {
	var list []json.Number
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	if err := dec.Decode(&list); err != nil {
		return nil, fmt.Errorf("must be a list of query numbers: %w", err)
	}
	out := make([]int, 0, len(list))
	for _, n := range list {
		q, err := queryNumber(n.String())
		if err != nil {
			return nil, err
		}
		if contains(out, q) {
			return nil, fmt.Errorf("query %d is listed twice", q)
		}
		out = append(out, q)
	}
	return out, nil
}

func (s *Splits) excluded(v json.RawMessage) error {
	var m map[string]string
	if err := json.Unmarshal(v, &m); err != nil {
		return fmt.Errorf("must map query numbers to reasons: %w", err)
	}
	for k, why := range m {
		q, err := queryNumber(k)
		if err != nil {
			return err
		}
		s.Excluded[q] = why
	}
	return nil
}

func (s *Splits) domains(v json.RawMessage) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(v, &m); err != nil {
		return fmt.Errorf("must map domain names to lists of query numbers: %w", err)
	}
	for name, l := range m {
		qs, err := ids(l)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		s.Domains[name] = qs
	}
	return nil
}

// queryNumber parses a query number: 1-9 decimal digits, not zero.
func queryNumber(t string) (int, error) {
	if len(t) == 0 || len(t) > 9 || strings.Trim(t, "0123456789") != "" {
		return 0, fmt.Errorf("%q is not a query number (1-9 digits)", t)
	}
	q, err := strconv.Atoi(t)
	if err != nil || q <= 0 {
		return 0, fmt.Errorf("%q is not a positive query number", t)
	}
	return q, nil
}

func pattern(v json.RawMessage) (string, error) {
	var p string
	if err := json.Unmarshal(v, &p); err != nil {
		return "", fmt.Errorf("must be a string: %w", err)
	}
	switch {
	case strings.Count(p, patternSlot) != 1:
		return "", fmt.Errorf("%q must hold %s exactly once", p, patternSlot)
	case strings.ContainsAny(p, "\x00\\"), path.IsAbs(p), path.Clean(p) != p, strings.HasPrefix(p, "../"), p == "..":
		return "", fmt.Errorf("%q must be a clean relative path below the tasks folder", p)
	case strings.Contains(strings.ReplaceAll(p, patternSlot, "1"), "/../"):
		return "", fmt.Errorf("%q must not contain '..'", p)
	}
	return p, nil
}

// File is the pattern's path for query q.
func File(pattern string, q int) string {
	return strings.Replace(pattern, patternSlot, strconv.Itoa(q), 1)
}

func contains(l []int, q int) bool {
	for _, x := range l {
		if x == q {
			return true
		}
	}
	return false
}
