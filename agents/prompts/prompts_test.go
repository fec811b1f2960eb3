package prompts

import (
	"strings"
	"testing"
)

func TestSystem(t *testing.T) {
	tests := []struct {
		role string
		data Data
		want []string
	}{
		{"orchestrator", Data{Agent: "orchestrator", Workspace: "/workspace", Protected: []string{"eval", "data/x.csv"}, ToolNames: "read_file, agent"},
			[]string{"orchestrator of a team", "/workspace/eval, /workspace/data/x.csv", "Tools: read_file, agent."}},
		{"worker", Data{Agent: "worker-2", Parent: "orchestrator", Workspace: "/workspace", ToolNames: "read_file"},
			[]string{"sub-agent (worker-2) started by orchestrator", "Tools: read_file."}},
	}
	for _, tt := range tests {
		got, err := System(tt.role, tt.data)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s prompt lacks %q:\n%s", tt.role, w, got)
			}
		}
		if tt.data.Protected == nil && strings.Contains(got, "protected") {
			t.Errorf("%s prompt mentions protected paths though there are none", tt.role)
		}
	}
	if _, err := System("judge", Data{}); err == nil {
		t.Error("unknown role rendered without error")
	}
}

func TestTeacher(t *testing.T) {
	if got, want := Teacher(" task \n", "  "), "task"; got != want {
		t.Errorf("bare teacher prompt = %q, want %q", got, want)
	}
	got := Teacher("task", "[workflow]")
	if !strings.HasPrefix(got, "task\n\n[workflow]\n\nExecution directive") {
		t.Errorf("teacher prompt = %q, want task, workflow, directive", got)
	}
	for _, w := range []string{"`agent` tool", "one stage at a time", "absolute paths", "verification command", "narrower scope", "Never give your final answer while a worker is still running"} {
		if !strings.Contains(Directive(), w) {
			t.Errorf("directive lacks %q", w)
		}
	}
}
