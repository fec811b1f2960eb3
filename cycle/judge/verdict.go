// Package judge is one pairwise judgment of MASS's evaluator role: given a
// task and two exported workspaces it asks a model which solves the task
// better and why, as {"winner":"A"|"B"|"tie","rationale":"…"}. It builds the
// evidence bundle of each workspace from its export tar (never following a
// link, everything capped), renders the documented evaluator prompt,
// randomises which workspace is shown as A from the seed, and retries a reply
// that does not parse before recording the judgment as invalid.
package judge

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Winners of a verdict.
const (
	WinnerA   = "A"
	WinnerB   = "B"
	WinnerTie = "tie"
)

// MaxReply bounds the reply text the parser looks at.
const MaxReply = 256 << 10

// Verdict is the evaluator's answer.
type Verdict struct {
	Winner    string `json:"winner"`
	Rationale string `json:"rationale"`
}

// ParseVerdict reads a reply: exactly one JSON object with "winner" (A, B or
// tie; case and surrounding space of A/B/tie are normalised) and a non-empty
// "rationale", optionally inside a ```json fence or after reasoning text.
// Any other key is ignored. The error says what is wrong, for the retry.
func ParseVerdict(reply string) (Verdict, error) {
	if len(reply) > MaxReply {
		return Verdict{}, fmt.Errorf("reply is %d bytes, more than %d", len(reply), MaxReply)
	}
	obj, err := LastObject(reply)
	if err != nil {
		return Verdict{}, err
	}
	var raw struct {
		Winner    *string `json:"winner"`
		Rationale *string `json:"rationale"`
	}
	if err := json.Unmarshal([]byte(obj), &raw); err != nil {
		return Verdict{}, fmt.Errorf("verdict is not valid JSON: %v", err)
	}
	if raw.Winner == nil {
		return Verdict{}, errors.New(`verdict has no "winner" key`)
	}
	v := Verdict{Winner: normWinner(*raw.Winner)}
	if v.Winner == "" {
		return Verdict{}, fmt.Errorf(`"winner" is %q; it must be "A", "B" or "tie"`, *raw.Winner)
	}
	if raw.Rationale == nil || strings.TrimSpace(*raw.Rationale) == "" {
		return Verdict{}, errors.New(`verdict has no non-empty "rationale"`)
	}
	v.Rationale = strings.TrimSpace(*raw.Rationale)
	return v, nil
}

func normWinner(w string) string {
	switch strings.ToLower(strings.TrimSpace(w)) {
	case "a":
		return WinnerA
	case "b":
		return WinnerB
	case "tie":
		return WinnerTie
	}
	return ""
}

// LastObject returns the last complete top-level JSON object in s: a model
// may think aloud before its answer, so the answer is the final object. One
// linear scan finds the balanced {...} spans (string-aware); they are tried
// from the last.
func LastObject(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", errors.New("reply is empty; answer with one JSON object")
	}
	spans := objectSpans(s)
	for i := len(spans) - 1; i >= 0; i-- {
		cand := s[spans[i][0]:spans[i][1]]
		if json.Valid([]byte(cand)) {
			return cand, nil
		}
	}
	return "", errors.New(`reply holds no JSON object; answer with {"winner":"A"|"B"|"tie","rationale":"..."}`)
}

// objectSpans lists the outermost balanced brace spans of s, skipping
// braces inside JSON strings.
func objectSpans(s string) [][2]int {
	var spans [][2]int
	depth, start := 0, 0
	inStr, esc := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inStr && esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case inStr && c == '"':
			inStr = false
		case inStr:
		case c == '"' && depth > 0:
			inStr = true
		case c == '{':
			if depth == 0 {
				start = i
			}
			depth++
		case c == '}' && depth > 0:
			depth--
			if depth == 0 {
				spans = append(spans, [2]int{start, i + 1})
			}
		}
	}
	return spans
}
