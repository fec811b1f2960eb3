package taskspec

import (
	"strings"
	"testing"
)

// TestSyntaxErrorLines: yaml.v3 put these errors on the line where the
// enclosing block began, one or more lines early, and never named a tab.
func TestSyntaxErrorLines(t *testing.T) {
	tests := []struct {
		name, doc string
		line      int
		msg       string
	}{
		{"tab indent", "id: a\nprompt: p\nlimits:\n\tcpus: 2\n", 4, "tab character in the indentation"},
		{"tab after spaces", "id: a\nprompt: p\nlimits:\n  cpus: 2\n\tagent_turns: 1\n", 5, "tab character in the indentation"},
		{"misindented key", "id: a\nprompt: p\nlimits:\n  cpus: 2\n wall: 3\n", 5, "did not find expected key"},
		{"unclosed flow", "id: a\nprompt: [a, b\nlimits: 3\n", 2, "did not find expected ',' or ']'"},
		{"json", "{\n \"id\": \"a\",\n \"prompt\": \"p\"\n \"limits\": {}\n}\n", 3, "expected ',' or '}'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.doc))
			errs, ok := err.(Errors)
			if !ok || len(errs) != 1 {
				t.Fatalf("Parse = %v", err)
			}
			if errs[0].Line != tt.line || !strings.Contains(errs[0].Msg, tt.msg) {
				t.Errorf("line %d %q, want line %d with %q", errs[0].Line, errs[0].Msg, tt.line, tt.msg)
			}
			if strings.Contains(errs[0].Msg, "line ") {
				t.Errorf("message names a line of its own: %q", errs[0].Msg)
			}
		})
	}
}

func TestUnknownFieldSuggests(t *testing.T) {
	_, err := Parse([]byte("id: a\npromt: p\nlimits:\n  cpus: 2\n  agent_turn: 3\n"))
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{`promt: unknown field (did you mean "prompt"?)`, `(did you mean "agent_turns"?)`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v lacks %s", err, want)
		}
	}
}
