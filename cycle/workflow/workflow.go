// Package workflow is the text a MASS workflow search optimises: the block
// appended to the bare task that names the agent team ("Create an agent team
// with following agent candidates to solve this problem:" and a JSON array of
// {"agent_id","role","instruction"}, contracts and hops written into the
// instructions). It parses and validates that form, renders it back
// byte-stably, keeps numbered versions per search and the per-task champion
// pointer.
package workflow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Header is the first line of every workflow, as in the reference.
const Header = "Create an agent team with following agent candidates to solve this problem:"

// Limits on a workflow text (it is model output, so untrusted).
const (
	MaxBytes       = 64 << 10
	MaxAgents      = 24
	MaxInstruction = 16 << 10
	MaxRole        = 512
)

// Agent is one team member.
type Agent struct {
	AgentID     string `json:"agent_id"`
	Role        string `json:"role"`
	Instruction string `json:"instruction"`
}

// Workflow is a team design: the agents of a strict one (Header and the
// JSON array), and/or its text as written. A design that is not strict
// (Header first, then anything, as the reference accepts one) has only
// its text, which the orchestrator reads as text.
type Workflow struct {
	Agents []Agent
	// Text is the design as written (white space trimmed); when set,
	// Render returns it instead of the canonical form.
	Text string
}

var idRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// ErrNoHeader is returned for text that does not start with Header.
var ErrNoHeader = errors.New("workflow must start with the line \"" + Header + "\"")

// Parse reads a workflow text: Header, then exactly one JSON array of agents
// (optionally inside a ```json fence). Leading and trailing white space is
// ignored; unknown agent keys, duplicate ids and empty fields are errors.
func Parse(text string) (Workflow, error) {
	if len(text) > MaxBytes {
		return Workflow{}, fmt.Errorf("workflow is %d bytes, more than %d", len(text), MaxBytes)
	}
	s := strings.TrimSpace(text)
	rest, ok := strings.CutPrefix(s, Header)
	if !ok {
		return Workflow{}, ErrNoHeader
	}
	rest = unfence(strings.TrimSpace(rest))
	if !strings.HasPrefix(rest, "[") {
		return Workflow{}, errors.New("workflow: a JSON array of agents must follow the header")
	}
	dec := json.NewDecoder(strings.NewReader(rest))
	dec.DisallowUnknownFields()
	var agents []Agent
	if err := dec.Decode(&agents); err != nil {
		return Workflow{}, fmt.Errorf("workflow agents: %w", err)
	}
	if dec.More() || strings.TrimSpace(rest[dec.InputOffset():]) != "" {
		return Workflow{}, errors.New("workflow: text after the JSON array of agents")
	}
	w := Workflow{Agents: agents}
	if err := w.Validate(); err != nil {
		return Workflow{}, err
	}
	return w, nil
}

func unfence(s string) string {
	if !strings.HasPrefix(s, "```") {
		return s
	}
	body := strings.TrimPrefix(s, "```")
	body = strings.TrimPrefix(body, "json")
	if end := strings.LastIndex(body, "```"); end >= 0 {
		return strings.TrimSpace(body[:end])
	}
	return s
}

// ParseDesign reads a design as the reference accepts one and keeps its
// text as written: its agents too when it is strict, else only the text,
// which must start with Header and have something after it.
func ParseDesign(text string) (Workflow, error) {
	w, err := Parse(text)
	if errors.Is(err, ErrNoHeader) || len(text) > MaxBytes {
		return Workflow{}, err
	}
	w.Text = strings.TrimSpace(text)
	if verr := w.Validate(); verr != nil {
		return Workflow{}, verr
	}
	return w, nil
}

// Strict reports whether w is the strict form (Header and the JSON array
// of agents).
func (w Workflow) Strict() bool { return len(w.Agents) > 0 }

func validateText(t string) error {
	switch {
	case len(t) > MaxBytes:
		return fmt.Errorf("workflow is %d bytes, more than %d", len(t), MaxBytes)
	case !strings.HasPrefix(t, Header):
		return ErrNoHeader
	case strings.TrimSpace(strings.TrimPrefix(t, Header)) == "":
		return errors.New("workflow: nothing after the header")
	case !utf8.ValidString(t) || strings.ContainsRune(t, 0):
		return errors.New("workflow: not UTF-8 text without NUL bytes")
	}
	return nil
}

// Validate checks the team: 1..MaxAgents agents, unique well-formed ids,
// non-empty role and instruction within their caps; a design with its
// text is checked as text (Header first, within MaxBytes).
func (w Workflow) Validate() error {
	if w.Text != "" {
		return validateText(w.Text)
	}
	if len(w.Agents) == 0 {
		return errors.New("workflow: no agents")
	}
	if len(w.Agents) > MaxAgents {
		return fmt.Errorf("workflow: %d agents, more than %d", len(w.Agents), MaxAgents)
	}
	seen := map[string]bool{}
	for i, a := range w.Agents {
		switch {
		case !idRE.MatchString(a.AgentID):
			return fmt.Errorf("workflow agent %d: agent_id %q must be 1-64 of [A-Za-z0-9_.-]", i+1, a.AgentID)
		case seen[a.AgentID]:
			return fmt.Errorf("workflow agent %d: duplicate agent_id %q", i+1, a.AgentID)
		case strings.TrimSpace(a.Role) == "" || len(a.Role) > MaxRole:
			return fmt.Errorf("workflow agent %s: role must be 1-%d bytes", a.AgentID, MaxRole)
		case strings.TrimSpace(a.Instruction) == "" || len(a.Instruction) > MaxInstruction:
			return fmt.Errorf("workflow agent %s: instruction must be 1-%d bytes", a.AgentID, MaxInstruction)
		}
		seen[a.AgentID] = true
	}
	return nil
}

// Render is the canonical text: Header, a newline, the agents as indented
// JSON (two spaces, no HTML escaping) and a final newline. Parse(Render(w))
// renders to the same bytes. A design with its text renders as that text
// and a final newline.
func (w Workflow) Render() string {
	if w.Text != "" {
		return w.Text + "\n"
	}
	var b bytes.Buffer
	b.WriteString(Header)
	b.WriteByte('\n')
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	agents := w.Agents
	if agents == nil {
		agents = []Agent{}
	}
	_ = enc.Encode(agents) // strings only: cannot fail
	return b.String()
}

// Canonical parses text and renders it canonically.
func Canonical(text string) (string, error) {
	w, err := Parse(text)
	if err != nil {
		return "", err
	}
	return w.Render(), nil
}
