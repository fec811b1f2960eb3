package taskspec

import (
	"fmt"
	"path"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/mass-dev/mass/internal/boxspec"
	"github.com/mass-dev/mass/internal/pathroot"
)

// Grader limits.
const (
	DefaultGraderTimeout = 5 * time.Minute
	MaxGraderTimeout     = time.Hour
	workspaceRoot        = boxspec.WorkspaceMount
)

// Grader is the task's ground truth: a command massd runs with `sh -c` in
// /workspace of a fresh container after the episode (the exported
// workspace read-only, protected paths as shipped, hidden paths mounted, no
// network). The episode passes only when it exits 0 and the last line of
// its stdout that is a JSON object says "passed": true. The script it runs
// must lie in protected_paths or hidden_paths, so no agent can change it.
//
// In YAML either a string (the command, DefaultGraderTimeout) or a mapping
// {command, timeout}.
type Grader struct {
	Command string        `json:"command" yaml:"command"`
	Timeout time.Duration `json:"timeout,omitempty" yaml:"timeout,omitempty"` // 0: DefaultGraderTimeout
}

// EffectiveTimeout is the grader's timeout with the default applied.
func (g *Grader) EffectiveTimeout() time.Duration {
	if g == nil || g.Timeout <= 0 {
		return DefaultGraderTimeout
	}
	return g.Timeout
}

func (d *decoder) grader(n *yaml.Node) *Grader {
	g := &Grader{}
	if n.Kind == yaml.ScalarNode {
		g.Command = d.str(n, "grader")
		return g
	}
	d.fields(n, "grader", []string{"command", "timeout"}, func(k string, v *yaml.Node) {
		switch k {
		case "command":
			g.Command = d.str(v, "grader.command")
		case "timeout":
			g.Timeout = d.duration(v, "grader.timeout")
		}
	})
	return g
}

// DestPath is the workspace-relative path an input lands at.
func (in Input) DestPath() string {
	if in.Dest != "" {
		return path.Clean(in.Dest)
	}
	return path.Base(in.Path)
}

// HiddenDests lists the workspace-relative destinations of the hidden paths.
func (s *Spec) HiddenDests() []string {
	out := make([]string, 0, len(s.HiddenPaths))
	for _, h := range s.HiddenPaths {
		out = append(out, h.DestPath())
	}
	return out
}

// under reports whether workspace-relative p equals or lies below one of roots.
func under(p string, roots []string) bool {
	p = path.Clean(p)
	for _, r := range roots {
		r = path.Clean(r)
		if pathroot.Under(p, r) {
			return true
		}
	}
	return false
}

// GraderScript is the first word of the grader command that names a
// workspace file: one starting with /workspace/, or a relative path whose
// first element is the destination of an input or a hidden path. It is
// returned workspace-relative; "" when the command names none.
func (s *Spec) GraderScript() string {
	if s.Grader == nil {
		return ""
	}
	var roots []string
	for _, in := range s.Inputs {
		roots = append(roots, in.DestPath())
	}
	roots = append(roots, s.HiddenDests()...)
	for _, w := range strings.Fields(s.Grader.Command) {
		w = strings.Trim(w, `"'`)
		switch {
		case strings.HasPrefix(w, workspaceRoot+"/"):
			return path.Clean(strings.TrimPrefix(w, workspaceRoot+"/"))
		case !path.IsAbs(w) && relPathProblem(w) == "" && under(w, roots):
			return path.Clean(w)
		}
	}
	return ""
}

// checkGuards validates hidden_paths and the grader; dests holds the
// inputs' destinations.
func (s *Spec) checkGuards(bad func(field, format string, args ...any), dests map[string]bool) {
	for i, h := range s.HiddenPaths {
		f := fmt.Sprintf("hidden_paths[%d]", i)
		if msg := relPathProblem(h.Path); msg != "" {
			bad(f+".path", "%q %s (hidden paths are copied from the spec's directory)", h.Path, msg)
			continue
		}
		if h.Dest != "" {
			if msg := relPathProblem(h.Dest); msg != "" {
				bad(f+".dest", "%q %s (dest is relative to /workspace)", h.Dest, msg)
				continue
			}
		}
		d := h.DestPath()
		for o := range dests {
			if under(d, []string{o}) || under(o, []string{d}) {
				bad(f, "%q overlaps the input or hidden path %q; a hidden path needs a place of its own", d, o)
			}
		}
		dests[d] = true
	}
	if s.Grader == nil {
		return
	}
	g := s.Grader
	if strings.TrimSpace(g.Command) == "" {
		bad("grader.command", "is required: the command that grades the workspace, e.g. python3 eval/grade.py")
		return
	}
	if strings.ContainsRune(g.Command, 0) {
		bad("grader.command", "contains a NUL byte")
		return
	}
	if g.Timeout < 0 || g.Timeout > MaxGraderTimeout {
		bad("grader.timeout", "%s must be positive and at most %s", g.Timeout, MaxGraderTimeout)
	}
	script := s.GraderScript()
	switch {
	case script == "":
		bad("grader.command", "%q names no workspace file; it must run a script that lives in protected_paths or hidden_paths", g.Command)
	case !under(script, s.ProtectedPaths) && !under(script, s.HiddenDests()):
		bad("grader.command", "runs %q, which lies outside protected_paths and hidden_paths; an agent could rewrite it", script)
	}
}
