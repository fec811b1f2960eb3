package taskspec

import (
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/internal/boxspec"
)

// Split values.
const (
	SplitTrain = "train"
	SplitTest  = "test"
	// SplitExcluded is a task kept out of training and of the held-out
	// evaluation alike (the reference's "excluded" list).
	SplitExcluded = "excluded"
)

// MaxGPUs bounds limits.gpus (device nodes /dev/nvidia0../dev/nvidia63).
const MaxGPUs = 64

var referenceIDRE = regexp.MustCompile(`^[0-9]{1,9}$`)

// ValidID reports whether id can name a task (it becomes a directory name):
// the data dir's one id rule, datadir.ValidID, in lower case.
func ValidID(id string) bool { return datadir.ValidID(id) && strings.ToLower(id) == id }

// line returns the line of a field as parsed, or 0.
func (s *Spec) line(field string) int {
	if s.lines == nil {
		return 0
	}
	if l, ok := s.lines[field]; ok {
		return l
	}
	if i := strings.LastIndexAny(field, ".["); i > 0 {
		return s.line(field[:i])
	}
	return 0
}

// check validates values without touching the filesystem.
func (s *Spec) check() Errors {
	var errs Errors
	bad := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Line: s.line(field), Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	switch {
	case s.ID == "":
		bad("id", "is required, e.g. id: churn-analysis")
	case !ValidID(s.ID):
		bad("id", "%q must be 1-64 lowercase letters, digits, '.', '_' or '-', starting with a letter or digit", s.ID)
	}
	if strings.TrimSpace(s.Prompt) == "" {
		bad("prompt", "is required: the bare task as given to the agents")
	}
	dests := map[string]bool{}
	for i, in := range s.Inputs {
		f := fmt.Sprintf("inputs[%d]", i)
		if msg := relPathProblem(in.Path); msg != "" {
			bad(f+".path", "%q %s (inputs are copied from the spec's directory)", in.Path, msg)
			continue
		}
		dest := in.Dest
		if dest == "" {
			dest = path.Base(in.Path)
		} else if msg := relPathProblem(dest); msg != "" {
			bad(f+".dest", "%q %s (dest is relative to /workspace)", dest, msg)
			continue
		}
		if dests[path.Clean(dest)] {
			bad(f+".dest", "%q is used by two inputs; give one a different dest", dest)
		}
		dests[path.Clean(dest)] = true
	}
	s.checkGuards(bad, dests)
	s.checkNetwork(bad)
	for i, g := range s.RequiredOutputs {
		f := fmt.Sprintf("required_outputs[%d]", i)
		if msg := relPathProblem(g); msg != "" {
			bad(f, "%q %s (globs are relative to /workspace)", g, msg)
		} else if _, err := path.Match(g, ""); err != nil {
			bad(f, "%q is not a valid glob: %v", g, err)
		}
	}
	for i, p := range s.ProtectedPaths {
		f := fmt.Sprintf("protected_paths[%d]", i)
		if msg := relPathProblem(p); msg != "" {
			bad(f, "%q %s (protected paths are relative to /workspace)", p, msg)
		}
	}
	switch s.Split {
	case "", SplitTrain, SplitTest, SplitExcluded:
	default:
		bad("split", "%q must be %q, %q or %q", s.Split, SplitTrain, SplitTest, SplitExcluded)
	}
	if len(s.Domain) > 200 || strings.ContainsAny(s.Domain, "\r\n") {
		bad("domain", "must be one line of at most 200 bytes")
	}
	if s.ReferenceID != "" && !referenceIDRE.MatchString(s.ReferenceID) {
		bad("reference_id", "%q must be the reference's query number, 1-9 digits (e.g. reference_id: 51)", s.ReferenceID)
	}
	if s.Image != "" {
		if msg := boxspec.ProfileProblem(s.Image); msg != "" {
			bad("image", "%q: %s (a profile: base, research or one built with `massctl image build --profile FILE`)", s.Image, msg)
		}
	}
	if s.Directive != "" {
		if msg := relPathProblem(s.Directive); msg != "" {
			bad("directive", "%q %s (the directive file is relative to the spec)", s.Directive, msg)
		}
	}
	if s.QueryTemplate != "" {
		if msg := relPathProblem(s.QueryTemplate); msg != "" {
			bad("query_template", "%q %s (the query template is relative to the spec)", s.QueryTemplate, msg)
		}
	}
	if s.Workflow != "" {
		if msg := relPathProblem(s.Workflow); msg != "" {
			bad("workflow", "%q %s (the workflow file is relative to the spec)", s.Workflow, msg)
		}
	}
	l := s.Limits
	if l.EpisodeWallTime <= 0 {
		bad("limits.episode_wall_time", "is required and must be positive, e.g. episode_wall_time: 30m")
	}
	if _, set := s.lines["limits.agent_wall_time"]; l.AgentWallTime < 0 || set && l.AgentWallTime == 0 {
		bad("limits.agent_wall_time", "must be positive, e.g. agent_wall_time: 10m, or left out to let agents run for the whole episode")
	} else if l.EpisodeWallTime > 0 && l.AgentWallTime > l.EpisodeWallTime {
		bad("limits.agent_wall_time", "%s is longer than episode_wall_time %s; an agent cannot outlast its episode", l.AgentWallTime, l.EpisodeWallTime)
	}
	if l.AgentTurns <= 0 {
		bad("limits.agent_turns", "is required and must be positive, e.g. agent_turns: 200")
	}
	if l.CPUs < 0 {
		bad("limits.cpus", "must not be negative")
	}
	if l.MemoryBytes != 0 && l.MemoryBytes < 16<<20 {
		bad("limits.memory_bytes", "%d is below 16MiB; use e.g. memory_bytes: 2GiB", l.MemoryBytes)
	}
	return errs
}

// relPathProblem describes why p is not a clean relative path inside its
// root, or returns "".
func relPathProblem(p string) string {
	switch {
	case p == "":
		return "is empty"
	case strings.ContainsRune(p, 0):
		return "contains a NUL byte"
	case path.IsAbs(p):
		return "must be relative, not absolute"
	case p == ".." || strings.HasPrefix(p, "../") || strings.Contains(p, "/../") || strings.HasSuffix(p, "/.."):
		return "must not contain '..'"
	case path.Clean(p) == ".":
		return "must name something below the root, not the root itself"
	}
	return ""
}
