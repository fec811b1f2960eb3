package tools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"time"

	"github.com/mass-dev/mass/agents/ledger"
	"github.com/mass-dev/mass/internal/pathroot"
	"github.com/mass-dev/mass/sandbox"
)

// DefaultResultBytes caps what one tool result shows the model.
const DefaultResultBytes = 64 << 10

// Ledger is where tool calls are recorded (a *ledger.Writer).
type Ledger interface {
	Append(r ledger.Record) (ledger.Record, error)
}

var _ Ledger = (*ledger.Writer)(nil)

// Delegate runs a sub-agent for the agent tool and returns its final report
// and the sub-agent's id.
type Delegate func(ctx context.Context, description, prompt, subagentType string) (report, agentID string, err error)

// fatalError marks an error that must end the agent, not just the call.
type fatalError struct{ err error }

func (e *fatalError) Error() string { return e.err.Error() }
func (e *fatalError) Unwrap() error { return e.err }

// Fatal wraps err so that Env.Call returns it instead of showing it to the
// model: the agent stops (a delegate's infrastructure or endpoint failure).
func Fatal(err error) error { return &fatalError{err: err} }

// Env is what one agent's tool calls run against. Fields are read-only
// after construction; Call is safe for concurrent use.
type Env struct {
	Agent     string
	Sandbox   sandbox.Sandbox
	Ledger    Ledger
	Protected []string // workspace-relative paths agents see read-only
	// ResultBytes caps a result shown to the model; 0 means DefaultResultBytes.
	ResultBytes int
	// Delegate serves the agent tool; nil for agents that may not delegate.
	Delegate Delegate
}

// Result is the outcome of one tool call.
type Result struct {
	Text string // shown to the model as the tool message content
	OK   bool
	// Record is what was appended to the ledger.
	Record ledger.Record
}

// outcome is what a tool implementation fills in.
type outcome struct {
	text   string
	rec    ledger.Record
	detail map[string]any
}

// Call parses and executes one tool call. Malformed calls and tool failures
// come back as a Result with OK false and a message for the model; the
// error is non-nil only when the ledger cannot be written (the episode must
// stop) or ctx ended.
func (e *Env) Call(ctx context.Context, name, arguments string) (Result, error) {
	defer ReleaseOrder(ctx)
	start := time.Now()
	sum := sha256.Sum256([]byte(arguments))
	o := outcome{rec: ledger.Record{Agent: e.Agent, Tool: name, ArgsSHA256: hex.EncodeToString(sum[:])}}
	spec, args, err := Parse(name, arguments)
	if err == nil {
		o.rec.Tool = spec.Name
		if spec.Name != name {
			o.detail = map[string]any{"called_as": name}
		}
	}
	if err == nil {
		err = Validate(spec, args)
	}
	if err == nil && spec.Name == Agent && e.Delegate == nil {
		err = fmt.Errorf("%w: the agent tool is only available to the orchestrator", ErrArgs)
	}
	if err == nil {
		err = e.run(ctx, spec, args, &o)
	}
	if ctx.Err() != nil && err != nil {
		return Result{}, ctx.Err()
	}
	var fe *fatalError
	if errors.As(err, &fe) {
		return Result{}, fe.err
	}
	o.rec.DurationMS = float64(time.Since(start).Microseconds()) / 1000
	o.rec.OK = err == nil
	if err != nil {
		o.rec.Error = err.Error()
		o.text = "Error: " + err.Error()
		if errors.Is(err, sandbox.ErrDenied) && isWrite(o.rec.Tool) {
			if _, lerr := e.Ledger.Append(ledger.Record{Agent: e.Agent, Tool: ledger.ToolProtectedWriteDenied,
				ArgsSHA256: o.rec.ArgsSHA256, Path: o.rec.Path, Error: err.Error(),
				Detail: mustJSON(map[string]any{"attempted_tool": o.rec.Tool})}); lerr != nil {
				return Result{}, fmt.Errorf("ledger: %w", lerr)
			}
		}
	}
	if len(o.detail) > 0 {
		o.rec.Detail = mustJSON(o.detail)
	}
	rec, lerr := e.Ledger.Append(o.rec)
	if lerr != nil {
		return Result{}, fmt.Errorf("ledger: %w", lerr)
	}
	text := Cap(o.text, e.resultBytes())
	if text == "" {
		text = "(empty result)"
	}
	return Result{Text: text, OK: err == nil, Record: rec}, nil
}

// delegate serves the agent tool. run_in_background is recorded; the
// sub-agent runs to completion either way (the sequencing is the team's).
func (e *Env) delegate(ctx context.Context, a Args, o *outcome) error {
	typ := a.String("subagent_type")
	if typ == "" {
		typ = DefaultSubagent
	}
	report, id, err := e.Delegate(ctx, a.String("description"), a.String("prompt"), typ)
	o.setDetail("subagent", id)
	o.setDetail("description", a.String("description"))
	o.setDetail("subagent_type", typ)
	if a.Has("run_in_background") {
		o.setDetail("run_in_background", a.Bool("run_in_background"))
	}
	if err != nil {
		return fmt.Errorf("sub-agent %s: %w", id, err)
	}
	o.text = report
	return nil
}

// setDetail adds one key to the ledger detail of the call.
func (o *outcome) setDetail(k string, v any) {
	if o.detail == nil {
		o.detail = map[string]any{}
	}
	o.detail[k] = v
}

func isWrite(tool string) bool { return tool == WriteFile || tool == Edit || tool == Shell }

func (e *Env) resultBytes() int {
	if e.ResultBytes > 0 {
		return e.ResultBytes
	}
	return DefaultResultBytes
}

func (e *Env) run(ctx context.Context, spec Spec, a Args, o *outcome) error {
	switch spec.Name {
	case Shell:
		return e.shell(ctx, a, o)
	case ReadFile:
		return e.read(ctx, a, o)
	case WriteFile, Edit:
		return e.write(ctx, spec.Name, a, o)
	case ListDir:
		return e.list(ctx, a, o)
	case Glob:
		return e.glob(ctx, a, o)
	case Grep:
		return e.grep(ctx, a, o)
	case TodoWrite:
		return e.todos(a, o)
	case Agent:
		return e.delegate(ctx, a, o)
	}
	return fmt.Errorf("%w: unknown tool %q", ErrArgs, spec.Name)
}

// Abs resolves p against /workspace and cleans it, without touching any file.
func Abs(p string) string {
	if !path.IsAbs(p) {
		p = path.Join(sandbox.WorkspaceMount, p)
	}
	return path.Clean(p)
}

// protected reports whether the absolute container path p lies in a protected path.
func (e *Env) protected(p string) bool {
	for _, pp := range e.Protected {
		if pathroot.Under(p, Abs(pp)) {
			return true
		}
	}
	return false
}

// Cap shortens s to at most max bytes (on a rune boundary) and appends a
// visible marker saying how much was cut.
func Cap(s string, max int) string {
	if len(s) <= max {
		return s
	}
	n := max
	for n > 0 && n < len(s) && (s[n]&0xC0) == 0x80 {
		n--
	}
	return s[:n] + fmt.Sprintf("\n[... truncated: %d of %d bytes shown ...]", n, len(s))
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(map[string]string{"marshal_error": err.Error()})
	}
	return b
}
