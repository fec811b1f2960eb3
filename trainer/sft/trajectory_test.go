package sft

import (
	"bytes"
	"compress/gzip"
	"strings"
	"testing"

	"github.com/mass-dev/mass/trainer/chat"
)

func TestReadCallsForms(t *testing.T) {
	line := rec{seq: 1, thread: "orchestrator", role: "orchestrator", msgs: []map[string]any{msg("user", "hi")},
		content: "hello", think: "because", call: "ls", finish: "tool_calls"}.line()
	calls, err := ReadCalls(bytes.NewReader(line))
	if err != nil {
		t.Fatal(err)
	}
	c := calls[0]
	if got, want := c.Response.Content, "hello"; got != want {
		t.Errorf("content: got %q, want %q", got, want)
	}
	if got, want := *c.Response.Reasoning, "because"; got != want {
		t.Errorf("reasoning: got %q, want %q", got, want)
	}
	if got, want := c.Response.ToolCalls[0].Arguments.Python(), `{"command": "ls"}`; got != want {
		t.Errorf("arguments: got %s, want %s", got, want)
	}

	// The proxy log form: gzip JSONL with an OpenAI request and completion.
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(`{"request":{"model":"m","messages":[{"role":"system","content":"s"},{"role":"user","content":"u"}]},` +
		`"response":{"choices":[{"message":{"role":"assistant","content":"ok","tool_calls":[{"id":"1","type":"function","function":{"name":"f","arguments":"{\"b\":1,\"a\":2}"}}]},"finish_reason":"tool_calls"}]}}` + "\n"))
	zw.Close()
	pcalls, err := ReadProxyLog(&buf)
	if err != nil {
		t.Fatal(err)
	}
	p := pcalls[0]
	if got, want := p.Response.ToolCalls[0].Arguments.Python(), `{"b": 1, "a": 2}`; got != want {
		t.Errorf("proxy arguments: got %s, want %s", got, want)
	}
	if !p.OK || p.FinishReason != "tool_calls" || !strings.HasPrefix(p.Thread, "thread-") {
		t.Errorf("proxy call: got %+v", p)
	}
}

func FuzzReadCalls(f *testing.F) {
	f.Add(string(rec{seq: 1, thread: "o", role: "orchestrator", msgs: []map[string]any{msg("user", "hi")}, content: "x", call: "ls"}.line()))
	f.Add(`{"seq":2,"status":"error","request":{"messages":[]}}` + "\n")
	f.Add(`{"request":{"messages":[{"role":"user","content":[{"type":"text","text":"a"}]}]},"response":{"choices":[{"message":{"content":null},"finish_reason":"length"}]}}`)
	f.Add(`{"request":{"messages":[{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":"{\"a\": [1, 2.5e3]}"}}]}]}}`)
	tok, tmpl := fixtures(f)
	f.Fuzz(func(t *testing.T, s string) {
		calls, err := ReadCalls(strings.NewReader(s))
		if err != nil {
			return
		}
		// Whatever is accepted must go through reconstruction, rendering and windowing.
		ep := &Episode{Meta: EpisodeMeta{EpisodeID: "e", TaskID: "t", TeacherPrompt: "T", Prompt: "P"}, Calls: calls}
		var st Stats
		for _, seg := range Segments(ep, true, &st) {
			r, err := tmpl.Render(seg.Messages, seg.Tools, chat.Options{})
			if err != nil {
				continue
			}
			rows, err := Windows(&seg, r, chat.Encode(tok, r), WindowConfig{MaxTokens: 64, ContextTokens: 8})
			if err != nil {
				continue
			}
			for _, row := range rows {
				if err := row.Validate(); err != nil {
					t.Fatal(err)
				}
				if row.NTokens > 64 {
					t.Fatalf("window of %d tokens", row.NTokens)
				}
			}
		}
	})
}

func FuzzReadBinary(f *testing.F) {
	var buf bytes.Buffer
	bw, _ := NewBinaryWriter(&buf)
	r := mkRow("t", RoleWorker, "w", []int32{1, 2, 3}, []bool{false, true, true})
	bw.Write(&r)
	bw.Flush()
	f.Add(buf.Bytes())
	f.Add([]byte("MASSWIN1"))
	f.Fuzz(func(t *testing.T, b []byte) {
		rows, err := ReadBinary(bytes.NewReader(b))
		if err != nil {
			return
		}
		for _, row := range rows {
			if err := row.Validate(); err != nil {
				t.Fatal(err)
			}
		}
	})
}
