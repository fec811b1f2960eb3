package scripted

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/mass-dev/mass/agents/model"
	"github.com/mass-dev/mass/agents/model/fakeopenai"
)

// TestThroughClient walks the orchestrator's script through the real client
// and checks each step is labelled and well formed.
func TestThroughClient(t *testing.T) {
	s, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := model.New(s.Config(), nil)
	if err != nil {
		t.Fatal(err)
	}
	msgs := []openai.ChatCompletionMessage{{Role: "system", Content: "s"}, {Role: "user", Content: "task"}}
	tools := []openai.Tool{{Type: "function", Function: &openai.FunctionDefinition{Name: "agent", Parameters: map[string]any{"type": "object"}}}}
	var names []string
	for range 3 {
		resp, err := c.Chat(context.Background(), model.Request{Messages: msgs, Tools: tools})
		if err != nil {
			t.Fatal(err)
		}
		m := resp.Message
		if !strings.HasPrefix(m.ReasoningContent, Label) {
			t.Errorf("reasoning %q is not labelled %s", m.ReasoningContent, Label)
		}
		for _, tc := range m.ToolCalls {
			var args map[string]any
			if err := json.Unmarshal([]byte(tc.Function.Arguments), &args); err != nil {
				t.Errorf("arguments %q: %v", tc.Function.Arguments, err)
			}
			names = append(names, tc.Function.Name)
		}
		msgs = append(msgs, m)
		for _, tc := range m.ToolCalls {
			msgs = append(msgs, openai.ChatCompletionMessage{Role: "tool", ToolCallID: tc.ID, Content: "report"})
		}
		if len(m.ToolCalls) == 0 && !strings.HasPrefix(m.Content, Label) {
			t.Errorf("final answer %q is not labelled", m.Content)
		}
	}
	if got, want := strings.Join(names, ","), "agent,agent"; got != want {
		t.Errorf("orchestrator calls = %s, want %s", got, want)
	}
	if !s.Config().DryRun {
		t.Error("scripted config is not marked dry-run")
	}
}

func TestWorkerScripts(t *testing.T) {
	tests := []struct {
		marker string
		want   []string
	}{
		{writerMarker, []string{"write_file", "run_shell_command", ""}},
		{readerMarker, []string{"read_file", "run_shell_command", ""}},
		{"something else", []string{""}},
	}
	for _, tt := range tests {
		r := &fakeopenai.Request{Messages: []fakeopenai.Message{{Role: "user", Content: tt.marker + ": do it"}}}
		for i, want := range tt.want {
			rep := Policy(r)
			got := ""
			if len(rep.Calls) > 0 {
				got = rep.Calls[0].Name
			}
			if got != want {
				t.Errorf("%s turn %d: call %q, want %q", tt.marker, i, got, want)
			}
			r.Messages = append(r.Messages, fakeopenai.Message{Role: "assistant"})
		}
	}
}
