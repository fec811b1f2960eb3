package tools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/mass-dev/mass/agents/ledger"
	"github.com/mass-dev/mass/sandbox"
)

// DefaultResultBytes caps what one tool result shows the model.
const DefaultResultBytes = 64 << 10

// Ledger is where tool calls are recorded (a *ledger.Writer).
type Ledger interface {
	Append(r ledger.Record) (ledger.Record, error)
}

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
	start := time.Now()
	sum := sha256.Sum256([]byte(arguments))
	o := outcome{rec: ledger.Record{Agent: e.Agent, Tool: name, ArgsSHA256: hex.EncodeToString(sum[:])}}
	spec, args, err := Parse(name, arguments)
	if err == nil && name == Agent && e.Delegate == nil {
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
		if errors.Is(err, sandbox.ErrDenied) && isWrite(name) {
			if _, lerr := e.Ledger.Append(ledger.Record{Agent: e.Agent, Tool: ledger.ToolProtectedWriteDenied,
				ArgsSHA256: o.rec.ArgsSHA256, Path: o.rec.Path, Error: err.Error(),
				Detail: mustJSON(map[string]any{"attempted_tool": name})}); lerr != nil {
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
	case Agent:
		report, id, err := e.Delegate(ctx, a.String("description"), a.String("prompt"), a.String("subagent_type"))
		o.detail = map[string]any{"subagent": id, "description": a.String("description"), "subagent_type": a.String("subagent_type")}
		if err != nil {
			return fmt.Errorf("sub-agent %s: %w", id, err)
		}
		o.text = report
		return nil
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
		root := Abs(pp)
		if p == root || strings.HasPrefix(p, root+"/") {
			return true
		}
	}
	return false
}

func (e *Env) write(ctx context.Context, tool string, a Args, o *outcome) error {
	p := Abs(a.String("file_path"))
	o.rec.Path = p
	if e.protected(p) {
		return fmt.Errorf("%w: %s is a protected path (read-only for agents)", sandbox.ErrDenied, p)
	}
	var (
		ch  sandbox.FileChange
		err error
	)
	if tool == WriteFile {
		ch, err = e.Sandbox.Files().Write(ctx, p, []byte(a.String("content")))
	} else {
		ch, err = e.Sandbox.Files().Edit(ctx, p, a.String("old_string"), a.String("new_string"), a.Bool("replace_all"))
	}
	if err != nil {
		return err
	}
	o.rec.Bytes, o.rec.SHA256Before, o.rec.SHA256After = ch.Bytes, ch.SHA256Before, ch.SHA256After
	o.detail = map[string]any{"created": ch.Created}
	switch {
	case tool == Edit:
		o.detail["replacements"] = ch.Replacements
		o.text = fmt.Sprintf("Successfully modified file: %s (%d replacement(s)).", p, ch.Replacements)
		if ch.Created {
			o.text = fmt.Sprintf("Created new file: %s with provided content.", p)
		}
	case ch.Created:
		o.text = fmt.Sprintf("Successfully created and wrote to new file: %s.", p)
	default:
		o.text = fmt.Sprintf("Successfully overwrote file: %s.", p)
	}
	return nil
}

func (e *Env) read(ctx context.Context, a Args, o *outcome) error {
	p := Abs(a.String("file_path"))
	o.rec.Path = p
	off, _ := a.Int("offset")
	lim, _ := a.Int("limit")
	if off < 0 || lim < 0 {
		return fmt.Errorf("%w: read_file: offset and limit must not be negative", ErrArgs)
	}
	r, err := e.Sandbox.Files().Read(ctx, p, int(off), int(lim))
	if err != nil {
		return err
	}
	o.rec.Bytes = int64(len(r.Content))
	o.rec.SHA256Before, o.rec.SHA256After = r.SHA256, r.SHA256
	o.detail = map[string]any{"offset": off, "limit": lim, "total_lines": r.TotalLines, "truncated": r.Truncated}
	o.text = r.Content
	if r.Truncated {
		o.text = fmt.Sprintf("[File content truncated: showing lines from %d of %d total lines; use offset and limit to read more.]\n%s", off, r.TotalLines, r.Content)
	}
	return nil
}

func (e *Env) list(ctx context.Context, a Args, o *outcome) error {
	p := Abs(a.String("path"))
	o.rec.Path = p
	ents, err := e.Sandbox.Files().List(ctx, p)
	if err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Directory listing for %s:\n", p)
	for _, en := range ents {
		name := path.Base(en.Path)
		if en.Type == "dir" {
			fmt.Fprintf(&b, "[DIR] %s\n", name)
		} else {
			fmt.Fprintf(&b, "%s\n", name)
		}
	}
	o.detail = map[string]any{"entries": len(ents)}
	o.text = b.String()
	return nil
}

func (e *Env) glob(ctx context.Context, a Args, o *outcome) error {
	dir := sandbox.WorkspaceMount
	if a.Has("path") {
		dir = Abs(a.String("path"))
	}
	o.rec.Path = dir
	paths, err := e.Sandbox.Files().Glob(ctx, a.String("pattern"), dir)
	if err != nil {
		return err
	}
	o.detail = map[string]any{"pattern": a.String("pattern"), "matches": len(paths)}
	if len(paths) == 0 {
		o.text = fmt.Sprintf("No files found matching pattern %q within %s", a.String("pattern"), dir)
		return nil
	}
	o.text = fmt.Sprintf("Found %d file(s) matching %q within %s:\n%s", len(paths), a.String("pattern"), dir, strings.Join(paths, "\n"))
	return nil
}

func (e *Env) grep(ctx context.Context, a Args, o *outcome) error {
	dir := sandbox.WorkspaceMount
	if a.Has("path") {
		dir = Abs(a.String("path"))
	}
	o.rec.Path = dir
	ms, err := e.Sandbox.Files().Grep(ctx, a.String("pattern"), dir, a.String("glob"))
	if err != nil {
		return err
	}
	o.detail = map[string]any{"pattern": a.String("pattern"), "matches": len(ms)}
	if len(ms) == 0 {
		o.text = fmt.Sprintf("No matches found for pattern %q in %s", a.String("pattern"), dir)
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Found %d match(es) for pattern %q in %s:\n---\n", len(ms), a.String("pattern"), dir)
	last := ""
	for _, m := range ms {
		if m.Path != last {
			fmt.Fprintf(&b, "File: %s\n", m.Path)
			last = m.Path
		}
		fmt.Fprintf(&b, "L%d: %s\n", m.Line, m.Text)
	}
	o.text = b.String()
	return nil
}

func (e *Env) shell(ctx context.Context, a Args, o *outcome) error {
	cmd := a.String("command")
	dir := sandbox.WorkspaceMount
	if a.Has("directory") {
		dir = Abs(a.String("directory"))
	}
	req := sandbox.ExecRequest{Argv: []string{"sh", "-c", cmd}, Dir: dir}
	if ms, ok := a.Int("timeout"); ok {
		if ms <= 0 {
			return fmt.Errorf("%w: run_shell_command: timeout must be a positive number of milliseconds", ErrArgs)
		}
		req.Timeout = time.Duration(ms) * time.Millisecond
	}
	o.rec.Path = dir
	o.detail = map[string]any{"command": Cap(cmd, 4096)}
	r, err := e.Sandbox.Exec(ctx, req)
	if err != nil {
		return err
	}
	o.rec.ExitCode = r.ExitCode
	o.detail["timed_out"] = r.TimedOut
	o.detail["truncated"] = r.Truncated
	o.detail["stdout_bytes"] = len(r.Stdout)
	o.detail["stderr_bytes"] = len(r.Stderr)
	o.text = fmt.Sprintf("Command: %s\nDirectory: %s\nStdout: %s\nStderr: %s\nExit Code: %d",
		cmd, dir, orEmpty(r.Stdout), orEmpty(r.Stderr), r.ExitCode)
	if r.TimedOut {
		o.text += fmt.Sprintf("\nThe command timed out after %s and was killed.", r.Duration.Round(time.Millisecond))
	}
	if r.Truncated {
		o.text += "\n[output exceeded the sandbox cap and was truncated]"
	}
	if r.ExitCode != 0 || r.TimedOut {
		// The call worked; the command failed. The model reads why.
		o.rec.Error = fmt.Sprintf("exit code %d", r.ExitCode)
	}
	return nil
}

func orEmpty(b []byte) string {
	if len(b) == 0 {
		return "(empty)"
	}
	return string(b)
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
