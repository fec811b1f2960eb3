package tools

import (
	"context"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/mass-dev/mass/agents/guard"
	"github.com/mass-dev/mass/sandbox"
)

// The tool implementations below fill o.rec (the ledger record) and o.text
// (what the model reads); an error is shown to the model as a tool error.

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
	o.merge(map[string]any{"created": ch.Created})
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
	if a.Has("pages") {
		o.setDetail("pages", a.String("pages"))
		if strings.EqualFold(path.Ext(p), ".pdf") {
			return fmt.Errorf("read_file: %s: PDF pages cannot be extracted in this sandbox (text files only)", p)
		}
	}
	r, err := e.Sandbox.Files().Read(ctx, p, int(off), int(lim))
	if err != nil {
		return err
	}
	o.rec.Bytes = int64(len(r.Content))
	o.rec.SHA256Before, o.rec.SHA256After = r.SHA256, r.SHA256
	o.merge(map[string]any{"offset": off, "limit": lim, "total_lines": r.TotalLines, "truncated": r.Truncated})
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
	ignore := ignoreMatcher(a.Strings("ignore"))
	var b strings.Builder
	fmt.Fprintf(&b, "Directory listing for %s:\n", p)
	shown := 0
	for _, en := range ents {
		name := path.Base(en.Path)
		if ignore(name) {
			continue
		}
		shown++
		if en.Type == "dir" {
			fmt.Fprintf(&b, "[DIR] %s\n", name)
		} else {
			fmt.Fprintf(&b, "%s\n", name)
		}
	}
	o.merge(map[string]any{"entries": len(ents), "shown": shown})
	o.text = b.String()
	return nil
}

func (e *Env) glob(ctx context.Context, a Args, o *outcome) error {
	dir := dirArg(a, "path")
	o.rec.Path = dir
	paths, err := e.Sandbox.Files().Glob(ctx, a.String("pattern"), dir)
	if err != nil {
		return err
	}
	o.merge(map[string]any{"pattern": a.String("pattern"), "matches": len(paths)})
	if len(paths) == 0 {
		o.text = fmt.Sprintf("No files found matching pattern %q within %s", a.String("pattern"), dir)
		return nil
	}
	o.text = fmt.Sprintf("Found %d file(s) matching %q within %s:\n%s", len(paths), a.String("pattern"), dir, strings.Join(paths, "\n"))
	return nil
}

func (e *Env) grep(ctx context.Context, a Args, o *outcome) error {
	dir := dirArg(a, "path")
	o.rec.Path = dir
	ms, err := e.Sandbox.Files().Grep(ctx, a.String("pattern"), dir, a.String("glob"))
	if err != nil {
		return err
	}
	o.merge(map[string]any{"pattern": a.String("pattern"), "matches": len(ms)})
	if len(ms) == 0 {
		o.text = fmt.Sprintf("No matches found for pattern %q in %s", a.String("pattern"), dir)
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Found %d match(es) for pattern %q in %s:\n---\n", len(ms), a.String("pattern"), dir)
	if lim, ok := a.Int("limit"); ok {
		if int64(len(ms)) > lim {
			fmt.Fprintf(&b, "(showing the first %d; raise limit or narrow the pattern for more)\n", lim)
			ms = ms[:lim]
		}
	}
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
	dir := dirArg(a, "directory")
	req := sandbox.ExecRequest{Argv: shellArgv(cmd), Dir: dir}
	if ms, ok := a.Int("timeout"); ok {
		req.Timeout = time.Duration(ms) * time.Millisecond
	}
	if a.Bool("is_background") {
		return e.background(ctx, cmd, dir, req, o)
	}
	o.rec.Path = dir
	o.merge(map[string]any{"command": Cap(cmd, 4096)})
	if a.Has("is_background") {
		o.detail["is_background"] = false
	}
	r, err := e.Sandbox.Exec(ctx, req)
	if err != nil {
		return err
	}
	o.rec.ExitCode = r.ExitCode
	o.detail["timed_out"] = r.TimedOut
	o.detail["truncated"] = r.Truncated
	o.detail["stdout_bytes"] = len(r.Stdout)
	o.detail["stderr_bytes"] = len(r.Stderr)
	if d := guard.Denied(r.Stderr); len(d) > 0 {
		// The guards judge a write attempt on a protected path by this.
		o.detail["denied"] = d
	}
	o.text = fmt.Sprintf("Command: %s\nDirectory: %s\nStdout: %s\nStderr: %s\nExit Code: %d",
		cmd, dir, orEmpty(r.Stdout), orEmpty(r.Stderr), r.ExitCode)
	if r.TimedOut {
		o.text += fmt.Sprintf("\nThe command timed out after %s and was killed.", r.Duration.Round(time.Millisecond))
	}
	if r.Truncated {
		o.text += "\n[output exceeded the sandbox cap and was truncated]"
	}
	if r.ExitCode != 0 || r.TimedOut {
		// The call worked; the command failed. The model reads why; the
		// audit shows the end of its stderr.
		o.rec.Error = fmt.Sprintf("exit code %d", r.ExitCode)
		o.detail["stderr_tail"] = StderrTail(r.Stderr)
	}
	return nil
}

// StderrTailBytes bounds the stderr a failed command leaves in its ledger record.
const StderrTailBytes = 512

// StderrTail is the last StderrTailBytes of a failed command's stderr,
// whole UTF-8 characters only.
func StderrTail(b []byte) string {
	if len(b) <= StderrTailBytes {
		return string(b)
	}
	b = b[len(b)-StderrTailBytes:]
	for len(b) > 0 && (b[0]&0xC0) == 0x80 {
		b = b[1:]
	}
	return "…" + string(b)
}

// dirArg is the directory named by the optional argument key, /workspace when absent.
func dirArg(a Args, key string) string {
	if a.Has(key) {
		return Abs(a.String(key))
	}
	return sandbox.WorkspaceMount
}

func orEmpty(b []byte) string {
	if len(b) == 0 {
		return "(empty)"
	}
	return string(b)
}
