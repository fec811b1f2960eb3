package model_test

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mass-dev/mass/agents/model"
	"github.com/mass-dev/mass/agents/model/fakeopenai"
)

// Defect 10: a stream closed before finish_reason or [DONE] returned the
// partial content and tool arguments as a success.
func TestTruncatedStreamIsRetried(t *testing.T) {
	var n atomic.Int32
	s := start(t, func(r *fakeopenai.Request) fakeopenai.Reply {
		rep := reply(r)
		if n.Add(1) == 1 {
			rep.CutStream = 4 // role, reasoning, content, part of the tool call
		}
		return rep
	})
	c := newClient(t, s, func(c *model.Config) { c.Stream = true })
	resp, err := c.Chat(t.Context(), convo)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Attempts != 2 || resp.FinishReason != "tool_calls" || len(resp.Message.ToolCalls) != 1 ||
		!strings.HasSuffix(resp.Message.ToolCalls[0].Function.Arguments, "}") {
		t.Fatalf("reply = %+v after %d attempts, want the whole second reply", resp.Message, resp.Attempts)
	}

	cut := start(t, func(r *fakeopenai.Request) fakeopenai.Reply { rep := reply(r); rep.CutStream = 3; return rep })
	c = newClient(t, cut, func(c *model.Config) { c.Stream = true; c.MaxRetries = 2 })
	_, err = c.Chat(t.Context(), convo)
	if !errors.Is(err, model.ErrEndpoint) || !strings.Contains(err.Error(), "stream ended before finish_reason") {
		t.Fatalf("always-cut stream: err = %v, want an ErrEndpoint about the truncated stream", err)
	}
	if got := len(cut.Requests()); got != 3 {
		t.Errorf("requests = %d, want 3 (1 + 2 retries)", got)
	}
}

// Defect 6: caps on the reply size and on tool-call arguments, each
// named in the error and not retried.
func TestReplyCaps(t *testing.T) {
	for _, tc := range []struct {
		name string
		rep  fakeopenai.Reply
		want string
	}{
		{"content", fakeopenai.Reply{Content: strings.Repeat("x", 64<<10)}, "MaxResponseBytes"},
		{"arguments", fakeopenai.Reply{ChunkBytes: 4096, Calls: []fakeopenai.Call{{Name: "write_file", Arguments: `{"content":"` + strings.Repeat("y", model.MaxToolArgBytes) + `"}`}}}, "MaxToolArgBytes"},
		{"negative usage", fakeopenai.Reply{Content: "ok", Usage: &fakeopenai.Usage{PromptTokens: 10, CompletionTokens: -1_000_000}}, "negative or absurd"},
		{"absurd usage", fakeopenai.Reply{Content: "ok", Usage: &fakeopenai.Usage{PromptTokens: 1 << 40, CompletionTokens: 1, TotalTokens: 1<<40 + 1}}, "negative or absurd"},
	} {
		for _, stream := range []bool{false, true} {
			s := start(t, func(*fakeopenai.Request) fakeopenai.Reply { return tc.rep })
			c := newClient(t, s, func(c *model.Config) { c.Stream = stream; c.MaxResponseBytes = 64 << 20; c.Timeout = 30 * time.Second })
			if tc.name == "content" {
				c = newClient(t, s, func(c *model.Config) { c.Stream = stream; c.MaxResponseBytes = 32 << 10 })
			}
			_, err := c.Chat(t.Context(), convo)
			if !errors.Is(err, model.ErrEndpoint) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s (stream %v): err = %.300v, want an ErrEndpoint naming %s", tc.name, stream, err, tc.want)
			}
			if got := len(s.Requests()); got != 1 {
				t.Errorf("%s (stream %v): %d requests, want 1 (a cap is not retried)", tc.name, stream, got)
			}
		}
	}
}
