package fakeresponses

import (
	"encoding/json"
	"net/http"

	"github.com/mass-dev/mass/agents/model/responses"
)

// complete is the finished response to req: a reasoning item when an
// effort is asked for, the message, and usage counted at four bytes a token.
func (s *Server) complete(id string, req responses.CreateRequest) responses.Response {
	text := s.Reply(req)
	in := 0
	for _, m := range req.Input {
		in += len(m.Content)/4 + 4
	}
	out := len(text)/4 + 1
	resp := responses.Response{ID: id, Object: "response", Status: responses.StatusCompleted, Model: req.Model}
	reasoning := 0
	if req.Reasoning != nil && req.Reasoning.Effort != "" {
		reasoning = 64
		resp.Output = append(resp.Output, responses.Item{Type: "reasoning", ID: "rs_" + id, Summary: []responses.Part{}})
	}
	resp.Output = append(resp.Output, responses.Item{Type: "message", ID: "msg_" + id, Role: "assistant", Status: "completed",
		Content: []responses.Part{{Type: "output_text", Text: text}}})
	u := &responses.Usage{InputTokens: in, OutputTokens: out + reasoning, TotalTokens: in + out + reasoning}
	u.OutputTokensDetails.ReasoningTokens = reasoning
	resp.Usage = u
	return resp
}

// retrieve answers a poll: in_progress once, then the finished response.
func (s *Server) retrieve(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	id := r.PathValue("id")
	s.mu.Lock()
	st, ok := s.stored[id]
	var resp responses.Response
	if ok {
		st.polls++
		resp = st.final
		if st.polls == 1 || st.stuck {
			resp = responses.Response{ID: id, Object: "response", Status: responses.StatusInProgress, Model: st.final.Model, Output: []responses.Item{}}
		}
	}
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "Response with id '"+id+"' not found.", "invalid_request_error", "")
		return
	}
	writeResponse(w, resp, false)
}

// writeResponse writes the JSON; truncated sends half of it and drops the
// connection, as a proxy timing out mid-body does.
func writeResponse(w http.ResponseWriter, resp responses.Response, truncated bool) {
	b, _ := json.Marshal(resp)
	w.Header().Set("Content-Type", "application/json")
	if !truncated {
		_, _ = w.Write(b)
		return
	}
	_, _ = w.Write(b[:len(b)/2])
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	panic(http.ErrAbortHandler)
}
