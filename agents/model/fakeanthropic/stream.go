package fakeanthropic

import (
	"encoding/json"
	"net/http"

	"github.com/mass-dev/mass/agents/model/anthropic"
)

// stream writes the reply as the API's server-sent events: message_start,
// a ping, a thinking block when thinking is on, the text in pieces,
// message_delta with the stop reason and the output tokens, message_stop.
func (s *Server) stream(w http.ResponseWriter, id string, req anthropic.Request, fault string) {
	text := s.Reply(req)
	in := len(req.System)/4 + 4
	for _, m := range req.Messages {
		in += len(m.Content)/4 + 4
	}
	out := len(text)/4 + 1
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Request-Id", "req_011fake")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	send := func(typ string, v any) {
		b, _ := json.Marshal(v)
		_, _ = w.Write([]byte("event: " + typ + "\ndata: " + string(b) + "\n\n"))
		if f != nil {
			f.Flush()
		}
	}
	send("message_start", anthropic.Event{Type: "message_start", Message: &anthropic.MessageStart{ID: id, Type: "message", Role: "assistant",
		Model: req.Model, Content: []anthropic.Block{}, Usage: anthropic.Usage{InputTokens: in, OutputTokens: 1}}})
	send("ping", map[string]string{"type": "ping"})
	idx := 0
	if req.Thinking != nil && req.Thinking.Type != "disabled" {
		send("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]string{"type": "thinking", "thinking": "", "signature": ""}})
		send("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]string{"type": "thinking_delta", "thinking": "Weighing both workspaces."}})
		send("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]string{"type": "signature_delta", "signature": "EqQBCgIYAhIM"}})
		send("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
		idx, out = 1, out+40
	}
	send("content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": map[string]string{"type": "text", "text": ""}})
	half := len(text) / 2
	for _, piece := range []string{text[:half], text[half:]} {
		send("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]string{"type": "text_delta", "text": piece}})
		if fault == FaultTruncate {
			return // the connection ends cleanly, before message_stop
		}
		if fault == FaultOverloaded {
			send("error", map[string]any{"type": "error", "error": map[string]string{"type": "overloaded_error", "message": "Overloaded"}})
			return
		}
	}
	send("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
	send("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": "end_turn", "stop_sequence": nil},
		"usage": map[string]int{"output_tokens": out}})
	send("message_stop", map[string]string{"type": "message_stop"})
}
