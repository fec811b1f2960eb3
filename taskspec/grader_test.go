package taskspec

import (
	"strings"
	"testing"
	"time"
)

const guardBase = "id: t1\nprompt: p\nlimits:\n  episode_wall_time: 1m\n  agent_turns: 3\ninputs: [sim, data]\nprotected_paths: [sim]\n"

func TestGraderAndHiddenParse(t *testing.T) {
	doc := guardBase + "hidden_paths:\n  - path: secret\n    dest: eval\ngrader:\n  command: python3 /workspace/eval/grade.py answer.json\n  timeout: 90s\n"
	s, err := Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if s.Grader.Command != "python3 /workspace/eval/grade.py answer.json" || s.Grader.Timeout != 90*time.Second {
		t.Errorf("grader = %+v", s.Grader)
	}
	if got := s.HiddenDests(); len(got) != 1 || got[0] != "eval" {
		t.Errorf("hidden dests = %v", got)
	}
	if got := s.GraderScript(); got != "eval/grade.py" {
		t.Errorf("script = %q", got)
	}
	s2, err := Parse([]byte(guardBase + "grader: python3 sim/check.py\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s2.Grader.EffectiveTimeout() != DefaultGraderTimeout || s2.GraderScript() != "sim/check.py" {
		t.Errorf("scalar grader = %+v script %q", s2.Grader, s2.GraderScript())
	}
}

func TestGraderRefusals(t *testing.T) {
	tests := []struct{ name, doc, field, msg string }{
		{"outside protected", guardBase + "grader: python3 data/grade.py\n", "grader.command", "outside protected_paths"},
		{"agent-written script", guardBase + "grader: python3 /workspace/grade.py\n", "grader.command", "outside protected_paths"},
		{"no script", guardBase + "grader: \"echo passed\"\n", "grader.command", "names no workspace file"},
		{"empty", guardBase + "grader: {timeout: 1m}\n", "grader.command", "required"},
		{"long timeout", guardBase + "grader: {command: python3 sim/g.py, timeout: 3h}\n", "grader.timeout", "at most"},
		{"hidden overlaps input", guardBase + "hidden_paths: [{path: x, dest: data/labels}]\n", "hidden_paths[0]", "overlaps"},
		{"hidden dotdot", guardBase + "hidden_paths: [../x]\n", "hidden_paths[0].path", "'..'"},
		{"unknown grader field", guardBase + "grader: {cmd: x}\n", "grader.cmd", "unknown field"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.doc))
			if err == nil {
				t.Fatal("parsed")
			}
			es, _ := err.(Errors)
			for _, e := range es {
				if e.Field == tc.field && strings.Contains(e.Msg, tc.msg) {
					return
				}
			}
			t.Errorf("want %s: %q, got %v", tc.field, tc.msg, err)
		})
	}
}
