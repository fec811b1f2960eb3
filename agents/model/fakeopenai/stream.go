package fakeopenai

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
	"unicode/utf8"
)

// chunkBytes is how much text one SSE delta carries.
const chunkBytes = 16

// stream answers with server-sent events the way vLLM does: a role delta,
// reasoning and content deltas, tool-call deltas (id and name first, then
// argument fragments), a finish delta, a usage chunk when asked, then [DONE].
func (s *Server) stream(w http.ResponseWriter, req *Request, id string, rep Reply, calls []ToolCall, finish string, u Usage) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	created := time.Now().Unix()
	sent := 0
	send := func(choices []map[string]any, usage *Usage) {
		if rep.CutStream > 0 && sent >= rep.CutStream {
			return
		}
		sent++
		ev := map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": req.Model, "choices": choices}
		if usage != nil {
			ev["usage"] = usage
		}
		b, _ := json.Marshal(ev)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if fl != nil {
			fl.Flush()
		}
	}
	delta := func(d map[string]any) { send([]map[string]any{{"index": 0, "delta": d, "finish_reason": nil}}, nil) }
	delta(map[string]any{"role": "assistant", "content": ""})
	for _, part := range split(rep.Reasoning, rep.ChunkBytes) {
		delta(map[string]any{"reasoning_content": part})
	}
	for _, part := range split(rep.Content, rep.ChunkBytes) {
		delta(map[string]any{"content": part})
	}
	for i, c := range calls {
		delta(map[string]any{"tool_calls": []map[string]any{{"index": i, "id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Function.Name, "arguments": ""}}}})
		for _, part := range split(c.Function.Arguments, rep.ChunkBytes) {
			delta(map[string]any{"tool_calls": []map[string]any{{"index": i, "function": map[string]any{"arguments": part}}}})
		}
	}
	send([]map[string]any{{"index": 0, "delta": map[string]any{}, "finish_reason": finish}}, nil)
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		send([]map[string]any{}, &u)
	}
	if rep.CutStream > 0 && sent >= rep.CutStream {
		return // the stream ends cleanly, but early
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	if fl != nil {
		fl.Flush()
	}
}

// split cuts s into pieces of about size (0: chunkBytes) without
// breaking a rune.
func split(s string, size int) []string {
	if size <= 0 {
		size = chunkBytes
	}
	var out []string
	for len(s) > 0 {
		n := min(size, len(s))
		for n < len(s) && !utf8.RuneStart(s[n]) {
			n++
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}
