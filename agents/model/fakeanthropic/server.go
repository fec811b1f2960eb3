// Package fakeanthropic is a fake of Anthropic's Messages API for tests:
// POST /v1/messages on the real JSON and server-sent events (thinking and
// text blocks, message_delta usage), the API's error bodies (401
// authentication_error, 429 rate_limit_error with retry-after), a stream
// cut off before message_stop and an overloaded error event on request.
package fakeanthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"github.com/mass-dev/mass/agents/model/anthropic"
	"github.com/mass-dev/mass/agents/model/internal/fakeapi"
)

// Faults a Server can answer a request with, one per call, in order.
const (
	FaultRateLimit  = "429"        // 429 rate_limit_error with retry-after: 1
	FaultTruncate   = "truncate"   // a stream that stops before message_stop
	FaultOverloaded = "overloaded" // an overloaded_error event mid-stream
)

// Server is the fake. Reply makes the assistant's text from a request;
// it accepts one API key (New, SetKey). Safe for concurrent use.
type Server struct {
	Reply func(anthropic.Request) string

	*fakeapi.Ledger // SetKey, Fail, Bodies
}

// New is a server accepting key and answering with reply.
func New(key string, reply func(anthropic.Request) string) *Server {
	return &Server{Ledger: fakeapi.NewLedger(key), Reply: reply}
}

// Handler serves /v1/messages.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/messages", s.messages)
	return mux
}

func writeError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Request-Id", "req_011fake")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(anthropic.ErrorReply{Type: "error", Error: anthropic.ErrorBody{Type: typ, Message: msg}, RequestID: "req_011fake"})
}

func (s *Server) messages(w http.ResponseWriter, r *http.Request) {
	body, fault, n := s.Receive(r)
	id := fmt.Sprintf("msg_01fake%04d", n)
	switch {
	case r.Header.Get("X-Api-Key") == "":
		writeError(w, http.StatusUnauthorized, "authentication_error", "x-api-key header is required")
		return
	case !s.Accepts(r.Header.Get("X-Api-Key")):
		writeError(w, http.StatusUnauthorized, "authentication_error", "invalid x-api-key")
		return
	case r.Header.Get("Anthropic-Version") == "":
		writeError(w, http.StatusBadRequest, "invalid_request_error", "anthropic-version: header is required")
		return
	}
	if msg := unknownParam(body); msg != "" {
		writeError(w, http.StatusBadRequest, "invalid_request_error", msg)
		return
	}
	var req anthropic.Request
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid request body: "+err.Error())
		return
	}
	if msg := check(req); msg != "" {
		writeError(w, http.StatusBadRequest, "invalid_request_error", msg)
		return
	}
	if fault == FaultRateLimit {
		w.Header().Set("Retry-After", "1")
		w.Header().Set("X-Should-Retry", "true")
		writeError(w, http.StatusTooManyRequests, "rate_limit_error", "This request would exceed the rate limit for your organization of 50 requests per minute.")
		return
	}
	s.stream(w, id, req, fault)
}

// check applies the API's rules this client depends on.
func check(req anthropic.Request) string {
	switch {
	case req.Model == "":
		return "model: Field required"
	case req.MaxTokens < 1:
		return "max_tokens: Field required"
	case len(req.Messages) == 0 || req.Messages[0].Role != "user":
		return "messages: the first message must use the \"user\" role"
	case !req.Stream:
		return "this fake serves streamed requests only"
	case req.Thinking != nil && !slices.Contains([]string{"adaptive", "enabled", "disabled"}, req.Thinking.Type):
		return "thinking.type: Input tag '" + req.Thinking.Type + "' found using 'type' does not match any of the expected tags"
	case req.Thinking != nil && req.Thinking.Type != "disabled" && req.Temperature != nil && *req.Temperature != 1:
		return "`temperature` may only be set to 1 when thinking is enabled."
	case req.OutputConfig != nil && !slices.Contains([]string{"low", "medium", "high", "xhigh", "max"}, req.OutputConfig.Effort):
		return "output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'"
	}
	for _, m := range req.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return "messages: Unexpected role \"" + m.Role + "\". Allowed roles are \"user\" or \"assistant\"."
		}
	}
	return ""
}

// params are the request body's top-level fields in the API reference,
// spelled independently of the client's struct tags.
var params = []string{"model", "max_tokens", "messages", "system", "stream", "temperature", "top_p", "top_k",
	"stop_sequences", "metadata", "tools", "tool_choice", "thinking", "output_config", "service_tier", "container", "mcp_servers"}

func unknownParam(body []byte) string {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return "invalid request body: " + err.Error()
	}
	for k := range m {
		if !slices.Contains(params, k) {
			return k + ": Extra inputs are not permitted"
		}
	}
	return ""
}
