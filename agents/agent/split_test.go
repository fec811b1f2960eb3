package agent

import (
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// qwen-code's findCompressSplitPoint cases, on OpenAI messages.
func TestSplitPoint(t *testing.T) {
	u := func(s string) openai.ChatCompletionMessage {
		return openai.ChatCompletionMessage{Role: "user", Content: s}
	}
	a := func(s string) openai.ChatCompletionMessage {
		return openai.ChatCompletionMessage{Role: "assistant", Content: s}
	}
	fc := func() openai.ChatCompletionMessage {
		return openai.ChatCompletionMessage{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: "c", Function: openai.FunctionCall{Name: "x", Arguments: "{}"}}}}
	}
	fr := func(s string) openai.ChatCompletionMessage {
		return openai.ChatCompletionMessage{Role: "tool", Content: s, ToolCallID: "c"}
	}
	big := strings.Repeat("x", 1000)
	cases := []struct {
		name string
		msgs []openai.ChatCompletionMessage
		want int // unit index
	}{
		{"clean split at the first user prompt past 70%", []openai.ChatCompletionMessage{u(big), a(big), u(big), a(big), u(big), a(big), u("q"), a("r")}, 6},
		{"ends in a plain answer: compress all", []openai.ChatCompletionMessage{u(big), a(big)}, 2},
		{"ends in tool results: compress all", []openai.ChatCompletionMessage{u("task"), fc(), fr(big), fr(big)}, 3},
		{"in flight: keep the call and two rounds", []openai.ChatCompletionMessage{u("task"), fc(), fr(big), fc(), fr(big), fc(), fr(big), fc(), fr(big), fc()}, 5},
		{"in flight, fewer rounds than two", []openai.ChatCompletionMessage{u(big), fc(), fr("r"), fc()}, 1},
	}
	for _, c := range cases {
		us := units(c.msgs)
		if got := splitPoint(us, 1-compressPreserve, toolRoundRetain); got != c.want {
			t.Errorf("%s: split at unit %d, want %d", c.name, got, c.want)
		}
	}
}
