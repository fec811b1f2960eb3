package daemon

import (
	"testing"

	"github.com/mass-dev/mass/taskspec"
)

// A reference task's bare query carries escaped newlines and the
// post-design "Use uv ..." suffix; the reference's ranking and
// evaluation judges read it cut at the marker, unescaped, trimmed. A
// native task's prompt stays as written.
func TestJudgeTaskReadsBareQueryAsReference(t *testing.T) {
	bare := "Forecast demand.\\n\\nDeliverables:\\n1) report.md\n\nUse uv for all Python workflows—run code with uv run.\n"
	ref := &taskspec.Spec{Prompt: bare, QueryTemplate: "query.txt", RequiredOutputs: []string{"b", "a"}}
	got := judgeTask("query7", ref)
	if want := "Forecast demand.\n\nDeliverables:\n1) report.md"; got.Prompt != want {
		t.Fatalf("reference task: judge task %q, want %q", got.Prompt, want)
	}
	if got.ID != "query7" || len(got.Required) != 2 || got.Required[0] != "a" {
		t.Fatalf("task fields: %+v", got)
	}
	native := &taskspec.Spec{Prompt: bare}
	if got := judgeTask("t", native); got.Prompt != bare {
		t.Fatalf("native task prompt changed: %q", got.Prompt)
	}
}
