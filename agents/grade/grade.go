// Package grade holds a task grader's outcome (run_status.json's "grade")
// and the parser of a grader's output. It imports nothing of mass, so
// every stage that reads an episode's ground truth can use it.
package grade

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// MaxOutputBytes caps the grader output kept in the grade.
const MaxOutputBytes = 8 << 10

// Grade is the ground truth of one episode (docs/formats.md, "grade").
type Grade struct {
	Ran      bool     `json:"ran"`             // the grader command ran to an exit
	Passed   bool     `json:"passed"`          // exit 0 and the verdict said "passed": true
	Score    *float64 `json:"score,omitempty"` // the verdict's "score", when a finite number
	Output   string   `json:"output"`          // stdout then stderr, capped at MaxOutputBytes
	Duration float64  `json:"duration"`        // seconds, container setup included
	ExitCode int      `json:"exit_code"`
	TimedOut bool     `json:"timed_out,omitempty"`
	// Truncated says the grader's stdout or stderr passed the runtime's
	// output cap; such a grade never passes (the cut may have hidden the
	// real verdict behind a forged one).
	Truncated bool `json:"truncated,omitempty"`
	// Reason says why the grade did not pass (or why no grader ran).
	Reason string `json:"reason,omitempty"`
}

// Verdict is the last JSON line of a grader's stdout.
type Verdict struct {
	Passed bool
	Score  *float64
}

// ErrNoVerdict means stdout held no JSON object line with a boolean "passed".
var ErrNoVerdict = errors.New("no verdict")

// ParseVerdict finds the last line of stdout that is a JSON object and
// reads its "passed" (a boolean, required) and "score" (a finite number,
// optional). Lines that are not JSON objects are skipped; the last JSON
// object line decides, even when it is malformed.
func ParseVerdict(stdout []byte) (Verdict, error) {
	lines := bytes.Split(stdout, []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		line := bytes.TrimSpace(lines[i])
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var raw map[string]json.RawMessage
		if json.Unmarshal(line, &raw) != nil {
			continue
		}
		return verdict(raw)
	}
	return Verdict{}, fmt.Errorf(`%w: stdout has no JSON object line like {"passed": true}`, ErrNoVerdict)
}

func verdict(raw map[string]json.RawMessage) (Verdict, error) {
	var v Verdict
	p, ok := raw["passed"]
	if !ok || json.Unmarshal(p, &v.Passed) != nil {
		return Verdict{}, fmt.Errorf(`%w: the last JSON line has no boolean "passed"`, ErrNoVerdict)
	}
	if s, ok := raw["score"]; ok {
		var f float64
		if json.Unmarshal(s, &f) == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
			v.Score = &f
		}
	}
	return v, nil
}

// Run is what a grader's run produced, as the runtime returned it.
type Run struct {
	Exit      int
	TimedOut  bool
	Truncated bool // stdout or stderr passed the output cap
	Stdout    []byte
	Stderr    []byte
	Seconds   float64
}

// FromRun turns a grader's run into a grade: it passes only with exit 0,
// no timeout, output within the cap and a verdict that says passed. A cut
// output fails because whatever the grader ran before its verdict (an
// agent's program) could have printed a forged verdict and then enough
// filler to push the real one past the cap.
func FromRun(r Run) Grade {
	g := Grade{Ran: true, ExitCode: r.Exit, TimedOut: r.TimedOut, Truncated: r.Truncated, Duration: r.Seconds,
		Output: capOutput(r.Stdout, r.Stderr)}
	v, err := ParseVerdict(r.Stdout)
	switch {
	case r.TimedOut:
		g.Reason = "the grader timed out"
	case r.Truncated:
		g.Reason = "the grader's output passed the output cap, so its last line is not known to be its verdict"
	case err != nil:
		g.Reason = err.Error()
	default:
		g.Score = v.Score
	}
	switch {
	case g.Reason != "":
	case r.Exit != 0:
		g.Reason = fmt.Sprintf("the grader exited %d", r.Exit)
	case !v.Passed:
		g.Reason = `the grader's verdict is "passed": false`
	default:
		g.Passed = true
	}
	return g
}

func capOutput(stdout, stderr []byte) string {
	b := append(append([]byte{}, stdout...), stderr...)
	if len(b) > MaxOutputBytes {
		b = append(b[:MaxOutputBytes:MaxOutputBytes], "\n[... grader output truncated ...]"...)
	}
	return string(bytes.ToValidUTF8(b, []byte("\uFFFD")))
}
