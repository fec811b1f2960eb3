package judge

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"os"
	"time"

	"github.com/mass-dev/mass/agents/model"
)

// MaxAttempts is how many replies a judgment asks for before it is invalid.
const MaxAttempts = 3

// Statuses of a judgment.
const (
	StatusValid   = "valid"
	StatusInvalid = "invalid"
)

// Task is what the evaluator is told about the task.
type Task struct {
	ID       string
	Prompt   string
	Domain   string
	Required []string
}

// Side is one workspace under judgment: a label the caller uses (e.g.
// "reference", "v3") and the path of its export tar.
type Side struct {
	Label string `json:"label"`
	Tar   string `json:"tar"`
}

// Request is one judgment.
type Request struct {
	Key           string // comparison key; with Seed it decides the sides
	Task          Task
	First, Second Side
	Model         string
	Seed          int64
	// Attempts is how many replies a judgment asks for before it is
	// invalid (the first and the re-asks of unparseable ones); 0 means
	// MaxAttempts.
	Attempts int
}

func (r Request) attempts() int {
	if r.Attempts <= 0 {
		return MaxAttempts
	}
	return r.Attempts
}

// Result is result.json of one judgment.
type Result struct {
	Key         string `json:"key"`
	Model       string `json:"model"`
	Seed        int64  `json:"seed"`
	Mode        string `json:"mode"`
	A           string `json:"a"` // label shown as workspace A
	B           string `json:"b"`
	Swapped     bool   `json:"swapped"` // Second was shown as A
	Status      string `json:"status"`  // valid | invalid
	Winner      string `json:"winner"`  // A | B | tie | invalid
	WinnerLabel string `json:"winner_label,omitempty"`
	Rationale   string `json:"rationale,omitempty"`
	Usage
	Episodes []string      `json:"episodes,omitempty"` // agent mode: the judge episodes
	Duration time.Duration `json:"duration_ns"`
	JudgedAt string        `json:"judged_at_utc,omitempty"` // RFC 3339, UTC; set by the caller that stores it
}

// Swapped decides from the seed and key whether Second is shown as A.
func Swapped(seed int64, key string) bool {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(seed))
	h := sha256.Sum256(append(b[:], key...))
	return h[0]&1 == 1
}

// bundleText builds and renders one side's bundle.
func bundleText(side Side, required []string) (string, error) {
	f, err := os.Open(side.Tar)
	if err != nil {
		return "", fmt.Errorf("open workspace export of %s: %w", side.Label, err)
	}
	defer f.Close()
	b, err := Build(f, required)
	if err != nil {
		return "", fmt.Errorf("evidence of %s: %w", side.Label, err)
	}
	return b.Render(), nil
}

// PromptFor builds the bundle-mode prompt of a request and the sides shown.
func PromptFor(req Request) (Prompt, Side, Side, error) {
	a, b := req.First, req.Second
	if Swapped(req.Seed, req.Key) {
		a, b = b, a
	}
	ta, err := bundleText(a, req.Task.Required)
	if err != nil {
		return Prompt{}, a, b, err
	}
	tb, err := bundleText(b, req.Task.Required)
	if err != nil {
		return Prompt{}, a, b, err
	}
	p, err := RenderPrompt(req.Task, ta, tb)
	return p, a, b, err
}

// Run makes one bundle-mode judgment. A reply that does not parse is sent
// back with the parse error, up to MaxAttempts replies; then the judgment
// is invalid (never a tie), as it is when the evidence cannot be built or
// the endpoint fails. The error is non-nil only when ctx ended.
func Run(ctx context.Context, m Model, req Request) (Result, Prompt, error) {
	start := time.Now()
	p, a, b, err := PromptFor(req)
	res := Result{Key: req.Key, Model: req.Model, Seed: req.Seed, Mode: "bundle", A: a.Label, B: b.Label,
		Swapped: a.Label != req.First.Label, Status: StatusInvalid, Winner: StatusInvalid}
	if err != nil {
		// Unreadable evidence is this judgment's problem, not the search's.
		res.Errors = []string{err.Error()}
		return res, p, nil
	}
	msgs := []Message{{Role: "system", Content: p.System}, {Role: "user", Content: p.User}}
	// The judge's output budget (agents/model.RoleJudge) applies.
	v, err := AskN(model.WithRole(ctx, model.RoleJudge), m, req.Model, msgs, req.Seed, req.attempts(), &res.Usage, ParseVerdict)
	res.Duration = time.Since(start)
	if ctx.Err() != nil {
		return res, p, ctx.Err()
	}
	if err == nil {
		res.Status, res.Winner, res.Rationale = StatusValid, v.Winner, v.Rationale
		switch v.Winner {
		case WinnerA:
			res.WinnerLabel = a.Label
		case WinnerB:
			res.WinnerLabel = b.Label
		}
	}
	return res, p, nil
}
