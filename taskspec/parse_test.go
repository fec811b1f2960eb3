package taskspec

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mass-dev/mass/sandbox/egress"
)

const good = `id: t1
prompt: do the thing
inputs:
  - path: data
  - path: a.csv
    dest: in/a.csv
required_outputs: ["out/*.json"]
protected_paths: [data]
split: test
limits:
  episode_wall_time: 30m
  agent_wall_time: 10m
  agent_turns: 50
  tokens: 1000
  cpus: 1.5
  memory_bytes: 2GiB
`

func TestParseGood(t *testing.T) {
	s, err := Parse([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.Limits.EpisodeWallTime, 30*time.Minute; got != want {
		t.Errorf("wall time = %v, want %v", got, want)
	}
	if got, want := s.Limits.AgentWallTime, 10*time.Minute; got != want {
		t.Errorf("agent wall time = %v, want %v", got, want)
	}
	if got, want := s.Limits.MemoryBytes, int64(2<<30); got != want {
		t.Errorf("memory = %d, want %d", got, want)
	}
	if got, want := s.Inputs[1].Dest, "in/a.csv"; got != want {
		t.Errorf("dest = %q, want %q", got, want)
	}
	if got, want := s.Split, SplitTest; got != want {
		t.Errorf("split = %q, want %q", got, want)
	}
}

func TestParseJSON(t *testing.T) {
	js := `{"id":"j1","prompt":"p","limits":{"episode_wall_time":"10m","agent_turns":3}}`
	s, err := Parse([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.ID, "j1"; got != want {
		t.Errorf("id = %q, want %q", got, want)
	}
}

func TestParseErrors(t *testing.T) {
	base := "id: t1\nprompt: p\nlimits:\n  episode_wall_time: 1m\n  agent_turns: 3\n"
	tests := []struct {
		name      string
		doc       string
		wantLine  int
		wantField string
		wantMsg   string
	}{
		{"missing id", "prompt: p\nlimits: {episode_wall_time: 1m, agent_turns: 3}\n", 0, "id", "required"},
		{"bad id", strings.Replace(base, "t1", "Bad/ID", 1), 1, "id", "lowercase"},
		{"unknown field", base + "prmopt: x\n", 6, "prmopt", "unknown field"},
		{"cpus type", base + "  cpus: two\n", 6, "limits.cpus", "must be a number"},
		{"turns negative", strings.Replace(base, "agent_turns: 3", "agent_turns: -3", 1), 5, "limits.agent_turns", "between 0"},
		{"bad duration", strings.Replace(base, "1m", "soon", 1), 4, "limits.episode_wall_time", "duration"},
		{"abs input", base + "inputs: [/etc/passwd]\n", 6, "inputs[0].path", "relative"},
		{"dotdot protected", base + "protected_paths: [../x]\n", 6, "protected_paths[0]", "'..'"},
		{"bad split", base + "split: dev\n", 6, "split", `"train", "test" or "excluded"`},
		{"bad glob", base + "required_outputs: ['a[']\n", 6, "required_outputs[0]", "glob"},
		{"inputs not list", base + "inputs: data\n", 6, "inputs", "must be a list"},
		{"duplicate", base + "id: t2\n", 6, "id", "twice"},
		{"dup dest", base + "inputs: [a/x, b/x]\n", 6, "inputs[1].dest", "used by two"},
		{"syntax", "id: [\n", 1, "", "not valid YAML"},
		{"not mapping", "- a\n- b\n", 1, "", "mapping"},
		{"empty", "  \n", 0, "", "empty"},
		{"memory small", base + "  memory_bytes: 10\n", 6, "limits.memory_bytes", "below 16MiB"},
		{"agent wall zero", base + "  agent_wall_time: 0\n", 6, "limits.agent_wall_time", "must be positive"},
		{"agent wall zero string", base + "  agent_wall_time: 0s\n", 6, "limits.agent_wall_time", "must be positive"},
		{"agent wall negative", base + "  agent_wall_time: -30s\n", 6, "limits.agent_wall_time", "must be positive"},
		{"agent wall negative seconds", base + "  agent_wall_time: -30\n", 6, "limits.agent_wall_time", "between 0"},
		{"agent wall past episode", base + "  agent_wall_time: 61s\n", 6, "limits.agent_wall_time", "longer than episode_wall_time 1m0s"},
		{"agent wall bad duration", base + "  agent_wall_time: soon\n", 6, "limits.agent_wall_time", "duration"},
		{"agent wall list", base + "  agent_wall_time: [1m]\n", 6, "limits.agent_wall_time", "duration"},
		{"reference id not a number", base + "reference_id: q51\n", 6, "reference_id", "query number"},
		{"directive outside", base + "directive: ../teacher_directive.txt\n", 6, "directive", "relative to the spec"},
		{"gpus too many", base + "  gpus: 65\n", 6, "limits.gpus", "between 0 and 64"},
		{"gpus fraction", base + "  gpus: 0.5\n", 6, "limits.gpus", "whole number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.doc))
			var es Errors
			if !errors.As(err, &es) || len(es) == 0 {
				t.Fatalf("Parse error = %v, want Errors", err)
			}
			e := es[0]
			if got, want := e.Line, tt.wantLine; got != want {
				t.Errorf("line = %d, want %d (%v)", got, want, e)
			}
			if got, want := e.Field, tt.wantField; got != want {
				t.Errorf("field = %q, want %q (%v)", got, want, e)
			}
			if !strings.Contains(e.Msg, tt.wantMsg) {
				t.Errorf("msg = %q, want it to contain %q", e.Msg, tt.wantMsg)
			}
		})
	}
}

func TestAgentWallTime(t *testing.T) {
	tests := []struct {
		name string
		val  string // agent_wall_time as written; "" leaves it out
		want time.Duration
	}{
		{"unset", "", 0},
		{"duration", "90s", 90 * time.Second},
		{"seconds", "45", 45 * time.Second},
		{"whole episode", "10m", 10 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := "id: t1\nprompt: p\nlimits:\n  episode_wall_time: 10m\n  agent_turns: 3\n"
			if tt.val != "" {
				doc += "  agent_wall_time: " + tt.val + "\n"
			}
			s, err := Parse([]byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Limits.AgentWallTime; got != tt.want {
				t.Errorf("agent wall time = %v, want %v", got, tt.want)
			}
		})
	}
}

// Errors on agent_wall_time read file:line: field: message.
func TestAgentWallTimeErrorNamesFileAndLine(t *testing.T) {
	p := filepath.Join(t.TempDir(), "task.yaml")
	doc := "id: t1\nprompt: p\nlimits:\n  episode_wall_time: 5m\n  agent_wall_time: 1h\n  agent_turns: 3\n"
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(p)
	if err == nil {
		t.Fatal("Load accepted an agent_wall_time longer than the episode")
	}
	want := p + ":5: limits.agent_wall_time: 1h0m0s is longer than episode_wall_time 5m0s"
	if got := err.Error(); !strings.HasPrefix(got, want) {
		t.Errorf("error = %q, want it to start with %q", got, want)
	}
}

func TestLoadChecksFiles(t *testing.T) {
	dir := t.TempDir()
	spec := "id: t1\nprompt: p\ninputs: [data, missing.csv]\nworkflow: wf.txt\nlimits: {episode_wall_time: 1m, agent_turns: 3}\n"
	if err := os.WriteFile(filepath.Join(dir, "task.yaml"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "data", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "data", "sub", "x.csv"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "wf.txt")); err != nil {
		t.Fatal(err)
	}
	_, err := Load(filepath.Join(dir, "task.yaml"))
	var es Errors
	if !errors.As(err, &es) {
		t.Fatalf("Load error = %v, want Errors", err)
	}
	if got, want := len(es), 2; got != want {
		t.Fatalf("got %d errors, want %d: %v", got, want, es)
	}
	if got, want := es[0].Field, "inputs[1].path"; got != want {
		t.Errorf("field = %q, want %q", got, want)
	}
	if got, want := es[1].Field, "workflow"; got != want || !strings.Contains(es[1].Msg, "symbolic link") {
		t.Errorf("second error = %v, want a symlink error on %q", es[1], want)
	}
	if !strings.HasPrefix(es[0].Error(), filepath.Join(dir, "task.yaml")+":3:") {
		t.Errorf("error %q does not start with file:line", es[0].Error())
	}

	if err := os.Remove(filepath.Join(dir, "wf.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "wf.txt"), []byte("[]"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "missing.csv"), []byte("b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(filepath.Join(dir, "task.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	files, err := s.Files()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(files, ","), "data/sub/x.csv,missing.csv,wf.txt"; got != want {
		t.Errorf("Files = %q, want %q", got, want)
	}
}

func TestExamples(t *testing.T) {
	paths, err := filepath.Glob("../examples/tasks/*/task.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(paths), 3; got < want {
		t.Fatalf("found %d example tasks, want at least %d", got, want)
	}
	for _, p := range paths {
		s, err := Load(p)
		if err != nil {
			t.Errorf("example %s: %v", p, err)
			continue
		}
		if len(s.ProtectedPaths) == 0 {
			t.Errorf("example %s protects nothing", p)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(good))
	f.Add([]byte(`{"id":"j1","prompt":"p","limits":{"episode_wall_time":"10m","agent_turns":3}}`))
	f.Add([]byte("id: [\n"))
	f.Add([]byte("limits: {memory_bytes: 1e400}\n"))
	f.Add([]byte("a: &x [*x]\n"))
	f.Add([]byte("id: a\nprompt: p\nlimits: {episode_wall_time: 1m, agent_wall_time: 0, agent_turns: 1}\n"))
	f.Add([]byte("id: a\nprompt: p\nlimits: {episode_wall_time: 1m, agent_turns: 1}\nnetwork: {allow: [a.org, '*.b.org', 1.2.3.4, 'c.org:443'], max_bytes: 1GiB}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data)
		if err != nil {
			var es Errors
			if !errors.As(err, &es) || len(es) == 0 {
				t.Fatalf("error %v is not a non-empty Errors", err)
			}
			return
		}
		if errs := s.check(); len(errs) > 0 {
			t.Fatalf("Parse accepted a spec that check rejects: %v", errs)
		}
		if !ValidID(s.ID) {
			t.Fatalf("accepted id %q", s.ID)
		}
		if s.Network != nil {
			if _, err := egress.NewAllowlist(s.Network.Allow); err != nil || len(s.Network.Allow) == 0 {
				t.Fatalf("accepted network %+v: %v", s.Network, err)
			}
		}
	})
}

func TestParseReportsAllProblems(t *testing.T) {
	doc := "id: Bad/ID\nprompt: p\nsplit: dev\nlimits:\n  episode_wall_time: 1m\n  agent_turns: lots\n"
	_, err := Parse([]byte(doc))
	var es Errors
	if !errors.As(err, &es) {
		t.Fatalf("Parse = %v, want Errors", err)
	}
	var got []string
	for _, e := range es {
		got = append(got, e.Field)
	}
	if want := "id,split,limits.agent_turns"; strings.Join(got, ",") != want {
		t.Errorf("fields = %v, want %s (in line order, no 'required' for the mistyped field)", got, want)
	}
}

func TestMessages(t *testing.T) {
	_, err := Parse([]byte("id: x\nprompt: p\nlimits: {agent_turns: 2}\nsplit: dev\n"))
	msgs := Messages(err)
	var es Errors
	if !errors.As(err, &es) || len(es) < 2 {
		t.Fatalf("Parse = %v, want at least two field errors", err)
	}
	if got, want := len(msgs), len(es); got != want {
		t.Fatalf("Messages gave %d entries, want %d: %q", got, want, msgs)
	}
	for i, e := range es {
		if got, want := msgs[i], e.Error(); got != want {
			t.Errorf("message %d = %q, want %q", i, got, want)
		}
	}
	if got, want := strings.Join(Messages(errors.New("disk full")), "|"), "disk full"; got != want {
		t.Errorf("Messages(plain error) = %q, want %q", got, want)
	}
}

func TestParseReferenceFields(t *testing.T) {
	s, err := Parse([]byte("id: t1\nprompt: p\nreference_id: 51\ndirective: teacher_directive.txt\nlimits:\n  episode_wall_time: 1m\n  agent_turns: 3\n"))
	if err != nil || s.ReferenceID != "51" || s.Directive != "teacher_directive.txt" {
		t.Fatalf("%+v %v", s, err)
	}
}

func TestParseGPUs(t *testing.T) {
	s, err := Parse([]byte("id: t1\nprompt: p\nlimits: {episode_wall_time: 1m, agent_turns: 3, gpus: 2}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Limits.GPUs != 2 {
		t.Errorf("gpus = %d, want 2", s.Limits.GPUs)
	}
	s, err = Parse([]byte("id: t1\nprompt: p\nlimits: {episode_wall_time: 1m, agent_turns: 3}\n"))
	if err != nil || s.Limits.GPUs != 0 {
		t.Errorf("no gpus: %v %d", err, s.Limits.GPUs)
	}
}
