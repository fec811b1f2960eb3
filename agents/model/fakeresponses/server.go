// Package fakeresponses is a fake of OpenAI's Responses API for tests:
// POST /v1/responses and GET /v1/responses/{id} on the real JSON, with the
// API's error bodies (401 invalid_api_key, 429 with retry-after) and a
// reply cut off in transit on request.
package fakeresponses

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/mass-dev/mass/agents/model/internal/fakeapi"
	"github.com/mass-dev/mass/agents/model/responses"
)

// Faults a Server can answer a POST with, one per call, in order.
const (
	FaultRateLimit = "429"      // 429 rate_limit_exceeded with retry-after-ms
	FaultTruncate  = "truncate" // 200 whose body stops halfway
	FaultServer    = "500"      // 500 server_error
	FaultStuck     = "stuck"    // a background response that stays in_progress
)

// Server is the fake. Reply makes the assistant's text from a request;
// it accepts one API key (New, SetKey). Safe for concurrent use.
type Server struct {
	Reply func(responses.CreateRequest) string

	*fakeapi.Ledger // SetKey, Fail (for the next POSTs), Bodies (of the POSTs)

	mu     sync.Mutex
	stored map[string]*storedResponse
}

type storedResponse struct {
	polls int
	stuck bool
	final responses.Response
}

// New is a server accepting key and answering with reply.
func New(key string, reply func(responses.CreateRequest) string) *Server {
	return &Server{Ledger: fakeapi.NewLedger(key), Reply: reply, stored: map[string]*storedResponse{}}
}

// Handler serves /v1/responses.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/responses", s.create)
	mux.HandleFunc("GET /v1/responses/{id}", s.retrieve)
	return mux
}

func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if ok && s.Accepts(got) {
		return true
	}
	if !ok || got == "" {
		writeError(w, http.StatusUnauthorized, "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).", "invalid_request_error", "")
		return false
	}
	writeError(w, http.StatusUnauthorized, "Incorrect API key provided: "+mask(got)+". You can find your API key at https://platform.openai.com/account/api-keys.", "invalid_request_error", "invalid_api_key")
	return false
}

// mask shows a key the way the API does: its first and last few characters.
func mask(k string) string {
	if len(k) < 8 {
		return "***"
	}
	return k[:3] + strings.Repeat("*", 10) + k[len(k)-4:]
}

func writeError(w http.ResponseWriter, status int, msg, typ, code string) {
	var c *string
	if code != "" {
		c = &code
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Request-Id", "req_fake")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(responses.ErrorReply{Error: responses.ErrorBody{Message: msg, Type: typ, Code: c}})
}

func (s *Server) create(w http.ResponseWriter, r *http.Request) {
	body, fault, n := s.Receive(r)
	id := fmt.Sprintf("resp_%04d", n)
	if !s.authorized(w, r) {
		return
	}
	if p := unknownParam(body); p != "" {
		writeError(w, http.StatusBadRequest, "Unknown parameter: '"+p+"'.", "invalid_request_error", "unknown_parameter")
		return
	}
	var req responses.CreateRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "We could not parse the JSON body of your request: "+err.Error(), "invalid_request_error", "")
		return
	}
	if msg := check(req); msg != "" {
		writeError(w, http.StatusBadRequest, msg, "invalid_request_error", "")
		return
	}
	switch fault {
	case FaultRateLimit:
		w.Header().Set("Retry-After-Ms", "20")
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusTooManyRequests, "Rate limit reached for requests. Please try again in 20ms.", "requests", "rate_limit_exceeded")
		return
	case FaultServer:
		writeError(w, http.StatusInternalServerError, "The server had an error while processing your request. Sorry about that!", "server_error", "")
		return
	}
	final := s.complete(id, req)
	if !req.Background {
		writeResponse(w, final, fault == FaultTruncate)
		return
	}
	s.mu.Lock()
	s.stored[id] = &storedResponse{final: final, stuck: fault == FaultStuck}
	s.mu.Unlock()
	writeResponse(w, responses.Response{ID: id, Object: "response", Status: responses.StatusQueued, Model: req.Model, Output: []responses.Item{}}, fault == FaultTruncate)
}

// check applies the API's rules this client depends on.
func check(req responses.CreateRequest) string {
	switch {
	case req.Model == "":
		return "Missing required parameter: 'model'."
	case len(req.Input) == 0:
		return "Missing required parameter: 'input'."
	case req.Background && !req.Store:
		return "Background responses require store=true."
	case req.Reasoning != nil && req.Temperature != nil:
		return "Unsupported parameter: 'temperature' is not supported with this model."
	}
	for _, m := range req.Input {
		if m.Type != "message" || (m.Role != "system" && m.Role != "developer" && m.Role != "user" && m.Role != "assistant") {
			return fmt.Sprintf("Invalid input item: type %q role %q.", m.Type, m.Role)
		}
	}
	return ""
}

// params are the create body's top-level fields in the API reference,
// spelled independently of the client's struct tags.
var params = []string{"model", "input", "instructions", "max_output_tokens", "reasoning", "temperature", "top_p",
	"background", "store", "stream", "tools", "tool_choice", "text", "metadata", "previous_response_id", "truncation",
	"include", "parallel_tool_calls", "service_tier", "user", "prompt_cache_key", "safety_identifier"}

func unknownParam(body []byte) string {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return "(body)"
	}
	for k := range m {
		if !slices.Contains(params, k) {
			return k
		}
	}
	return ""
}
