package taskspec

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/mass-dev/mass/internal/suggest"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// MaxSpecBytes caps the size of a spec document.
const MaxSpecBytes = 1 << 20

// Parse decodes a YAML or JSON spec (JSON is read as YAML) and validates
// its syntax and field types. Unknown fields are errors. It does not touch
// the filesystem; see Load and Validate for that.
func Parse(data []byte) (*Spec, error) {
	if len(data) > MaxSpecBytes {
		return nil, Errors{{Msg: fmt.Sprintf("spec is %d bytes; the limit is %d", len(data), MaxSpecBytes)}}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, Errors{{Msg: "spec is empty; it needs at least id, prompt and limits"}}
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return nil, Errors{syntaxError(data, err)}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, Errors{{Msg: "expected exactly one document"}}
	}
	// A second document (after "---", or anything after a JSON object) is
	// refused rather than ignored.
	var more yaml.Node
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		return nil, Errors{{Line: more.Line, Msg: "expected exactly one document; found more after it (a second YAML document or trailing text)"}}
	}
	d := &decoder{}
	s := &Spec{}
	d.spec(doc.Content[0], s)
	errs := d.errs
	// Value checks run too, so one pass reports every problem, except on
	// fields whose decoding already failed.
	for _, e := range s.check() {
		if !coveredBy(d.errs, e.Field) {
			errs = append(errs, e)
		}
	}
	if len(errs) > 0 {
		sort.SliceStable(errs, func(i, j int) bool { return errs[i].Line < errs[j].Line })
		return nil, errs
	}
	return s, nil
}

// coveredBy reports whether field, or a field containing it, already has
// an error in errs.
func coveredBy(errs Errors, field string) bool {
	for _, e := range errs {
		if e.Field == field || e.Field == "" || strings.HasPrefix(field, e.Field+".") || strings.HasPrefix(field, e.Field+"[") {
			return true
		}
	}
	return false
}

func yamlErrLine(err error) int {
	msg := err.Error()
	if i := strings.Index(msg, "line "); i >= 0 {
		rest := msg[i+5:]
		j := 0
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		if n, err := strconv.Atoi(rest[:j]); err == nil {
			return n
		}
	}
	return 0
}

type decoder struct {
	errs  Errors
	lines map[string]int
}

func (d *decoder) fail(n *yaml.Node, field, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	d.errs = append(d.errs, &FieldError{Line: line, Field: field, Msg: fmt.Sprintf(format, args...)})
}

// fields walks a mapping node, calling set for each known key and reporting
// unknown and duplicate keys.
func (d *decoder) fields(n *yaml.Node, path string, known []string, set func(key string, v *yaml.Node)) {
	if n.Kind != yaml.MappingNode {
		d.fail(n, path, "must be a mapping (key: value lines), got %s", kindName(n))
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name := join(path, k.Value)
		if !contains(known, k.Value) {
			hint := ""
			if near := suggest.Closest(k.Value, known); near != "" {
				hint = fmt.Sprintf(" (did you mean %q?)", near)
			}
			d.fail(k, name, "unknown field%s; known fields here: %s", hint, strings.Join(known, ", "))
			continue
		}
		if seen[k.Value] {
			d.fail(k, name, "appears twice; keep one")
			continue
		}
		seen[k.Value] = true
		if d.lines == nil {
			d.lines = map[string]int{}
		}
		d.lines[name] = k.Line
		set(k.Value, v)
	}
}

func (d *decoder) spec(n *yaml.Node, s *Spec) {
	known := []string{"id", "prompt", "inputs", "required_outputs", "protected_paths", "split", "limits", "workflow", "hidden_paths", "grader", "domain", "network", "reference_id", "directive", "query_template", "image"}
	d.fields(n, "", known, func(k string, v *yaml.Node) {
		switch k {
		case "id":
			s.ID = d.str(v, k)
		case "prompt":
			s.Prompt = d.str(v, k)
		case "inputs":
			d.seq(v, k, func(i int, e *yaml.Node) {
				s.Inputs = append(s.Inputs, d.input(e, fmt.Sprintf("inputs[%d]", i)))
			})
		case "required_outputs":
			s.RequiredOutputs = d.strs(v, k)
		case "protected_paths":
			s.ProtectedPaths = d.strs(v, k)
		case "split":
			s.Split = d.str(v, k)
		case "limits":
			d.limits(v, &s.Limits)
		case "workflow":
			s.Workflow = d.str(v, k)
		case "hidden_paths":
			d.seq(v, k, func(i int, e *yaml.Node) {
				s.HiddenPaths = append(s.HiddenPaths, d.input(e, fmt.Sprintf("hidden_paths[%d]", i)))
			})
		case "grader":
			s.Grader = d.grader(v)
		case "domain":
			s.Domain = d.str(v, k)
		case "network":
			s.Network = d.network(v)
		case "reference_id":
			s.ReferenceID = d.str(v, k)
		case "directive":
			s.Directive = d.str(v, k)
		case "query_template":
			s.QueryTemplate = d.str(v, k)
		case "image":
			s.Image = d.str(v, k)
		}
	})
	s.lines = d.lines
}

func (d *decoder) input(n *yaml.Node, path string) Input {
	var in Input
	if n.Kind == yaml.ScalarNode {
		in.Path = d.str(n, path)
		return in
	}
	d.fields(n, path, []string{"path", "dest"}, func(k string, v *yaml.Node) {
		switch k {
		case "path":
			in.Path = d.str(v, path+".path")
		case "dest":
			in.Dest = d.str(v, path+".dest")
		}
	})
	if in.Path == "" && n.Kind == yaml.MappingNode {
		d.fail(n, path+".path", "is required (a file or directory relative to the spec)")
	}
	return in
}

func (d *decoder) limits(n *yaml.Node, l *Limits) {
	known := []string{"episode_wall_time", "agent_wall_time", "agent_turns", "tokens", "cpus", "memory_bytes", "gpus"}
	d.fields(n, "limits", known, func(k string, v *yaml.Node) {
		f := "limits." + k
		switch k {
		case "episode_wall_time":
			l.EpisodeWallTime = d.duration(v, f)
		case "agent_wall_time":
			l.AgentWallTime = d.duration(v, f)
		case "agent_turns":
			l.AgentTurns = int(d.int(v, f, math.MaxInt32))
		case "tokens":
			l.Tokens = d.int(v, f, math.MaxInt64)
		case "cpus":
			l.CPUs = d.float(v, f)
		case "memory_bytes":
			l.MemoryBytes = d.size(v, f)
		case "gpus":
			l.GPUs = int(d.int(v, f, MaxGPUs))
		}
	})
}

func (d *decoder) seq(n *yaml.Node, path string, each func(i int, e *yaml.Node)) {
	if n.Kind != yaml.SequenceNode {
		d.fail(n, path, "must be a list, got %s", kindName(n))
		return
	}
	for i, e := range n.Content {
		each(i, e)
	}
}

func (d *decoder) strs(n *yaml.Node, path string) []string {
	var out []string
	d.seq(n, path, func(i int, e *yaml.Node) {
		out = append(out, d.str(e, fmt.Sprintf("%s[%d]", path, i)))
	})
	return out
}

func (d *decoder) str(n *yaml.Node, path string) string {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		d.fail(n, path, "must be a string, got %s", kindName(n))
		return ""
	}
	return n.Value
}

func (d *decoder) int(n *yaml.Node, path string, max int64) int64 {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
		d.fail(n, path, "must be a whole number, got %s %q", kindName(n), n.Value)
		return 0
	}
	v, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64)
	if err != nil || v < 0 || v > max {
		d.fail(n, path, "must be a whole number between 0 and %d, got %q", max, n.Value)
		return 0
	}
	return v
}

func (d *decoder) float(n *yaml.Node, path string) float64 {
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") {
		d.fail(n, path, "must be a number, got %s %q", kindName(n), n.Value)
		return 0
	}
	v, err := strconv.ParseFloat(n.Value, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		d.fail(n, path, "must be a finite number, got %q", n.Value)
		return 0
	}
	return v
}

// duration accepts Go durations ("30m", "1h30m") or a number of seconds.
func (d *decoder) duration(n *yaml.Node, path string) time.Duration {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!int" {
		secs := d.int(n, path, math.MaxInt64/int64(time.Second))
		return time.Duration(secs) * time.Second
	}
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		d.fail(n, path, `must be a duration like "30m" or a number of seconds, got %s %q`, kindName(n), n.Value)
		return 0
	}
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		d.fail(n, path, `must be a duration like "30m" or "1h30m", got %q`, n.Value)
		return 0
	}
	return v
}

var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
	{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"t", 1 << 40},
	{"b", 1},
}

// size accepts a number of bytes or a size such as "4GiB", "512m".
func (d *decoder) size(n *yaml.Node, path string) int64 {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!int" {
		return d.int(n, path, math.MaxInt64)
	}
	if v, ok := ParseSize(n.Value); ok && n.Kind == yaml.ScalarNode {
		return v
	}
	d.fail(n, path, `must be a number of bytes or a size like "4GiB" or "512MiB", got %q`, n.Value)
	return 0
}

// ParseSize parses "4GiB", "512m", "1000" into bytes.
func ParseSize(s string) (int64, bool) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v < 0 || math.IsNaN(v) || v*float64(mult) >= math.MaxInt64 {
		return 0, false
	}
	return int64(v * float64(mult)), true
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	switch n.Tag {
	case "!!null":
		return "nothing"
	case "!!int", "!!float":
		return "a number"
	case "!!bool":
		return "a boolean"
	case "!!str":
		return "a string"
	}
	return "a value"
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
