package fakeopenai

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Server serves /v1/chat/completions and /v1/models. Safe for concurrent use.
type Server struct {
	policy  Policy
	model   string
	srv     *http.Server
	ln      net.Listener
	calls   atomic.Int64
	mu      sync.Mutex
	reqs    []*Request
	keep    bool
	started time.Time
	log     *slog.Logger
	served  chan struct{} // closed when the serve goroutine returns
	key     string        // required bearer token; "" for none
}

// Option configures a Server.
type Option func(*Server)

// WithModelID sets the model id listed by /v1/models (default "fake").
func WithModelID(id string) Option { return func(s *Server) { s.model = id } }

// WithLogger sets where serve errors go (default: discarded).
func WithLogger(l *slog.Logger) Option { return func(s *Server) { s.log = l } }

// WithoutHistory stops the server from keeping received requests (long-lived servers).
func WithoutHistory() Option { return func(s *Server) { s.keep = false } }

// WithAPIKey makes every request carry "Authorization: Bearer key", as
// OpenAI's API wants; others get 401 with OpenAI's invalid_api_key error.
// A server on a loopback port is reachable by every local user, so a
// long-lived one (massd's scripted model) sets a secret.
func WithAPIKey(key string) Option { return func(s *Server) { s.key = key } }

// New returns an unstarted server answering with p.
func New(p Policy, opts ...Option) *Server {
	s := &Server{policy: p, model: "fake", keep: true, log: slog.New(slog.DiscardHandler)}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Start listens on addr ("127.0.0.1:0" for an ephemeral loopback port).
func (s *Server) Start(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("fake openai listen %s: %w", addr, err)
	}
	s.ln = ln
	s.started = time.Now()
	s.srv = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	s.served = make(chan struct{})
	go func() {
		defer close(s.served)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("fake openai serve", "err", err)
		}
	}()
	return nil
}

// URL is the base URL a client uses, ending in /v1.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() + "/v1" }

// Close stops the server, dropping open connections, and returns once its
// serve goroutine has.
func (s *Server) Close() error {
	if s.srv == nil {
		return nil
	}
	err := s.srv.Close()
	<-s.served
	return err
}

// Requests returns the requests received so far, in arrival order.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.reqs...)
}

// Handler is the HTTP handler, for mounting on another server.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("POST /chat/completions", s.chat)
	mux.HandleFunc("GET /v1/models", s.models)
	if s.key == "" {
		return mux
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(s.key)) != 1 {
			writeJSON(w, http.StatusUnauthorized, map[string]any{"error": map[string]any{
				"message": "Incorrect API key provided", "type": "invalid_request_error", "param": nil, "code": "invalid_api_key"}})
			return
		}
		mux.ServeHTTP(w, r)
	})
}

func (s *Server) models(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []map[string]any{
		{"id": s.model, "object": "model", "created": s.started.Unix(), "owned_by": "mass"},
	}})
}

func (s *Server) chat(w http.ResponseWriter, hr *http.Request) {
	body, err := io.ReadAll(io.LimitReader(hr.Body, 64<<20))
	if err != nil {
		writeError(w, http.StatusBadRequest, "read body: "+err.Error())
		return
	}
	req, err := parseRequest(body)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	req.Header = map[string]string{}
	for k := range hr.Header {
		req.Header[k] = hr.Header.Get(k)
	}
	if s.keep {
		s.mu.Lock()
		s.reqs = append(s.reqs, req)
		s.mu.Unlock()
	}
	rep := s.policy(req)
	if rep.Delay > 0 {
		select {
		case <-time.After(rep.Delay):
		case <-hr.Context().Done():
			return
		}
	}
	if rep.Hangup {
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				c.Close()
				return
			}
		}
		panic(http.ErrAbortHandler)
	}
	if rep.Status != 0 && rep.Status != http.StatusOK {
		writeError(w, rep.Status, rep.Error)
		return
	}
	n := s.calls.Add(1)
	id := fmt.Sprintf("chatcmpl-%d", n)
	calls := make([]ToolCall, len(rep.Calls))
	for i, c := range rep.Calls {
		calls[i] = ToolCall{ID: fmt.Sprintf("call_%d_%d", n, i+1), Type: "function", Function: Function(c)}
	}
	finish := rep.FinishReason
	if finish == "" {
		finish = "stop"
		if len(calls) > 0 {
			finish = "tool_calls"
		}
	}
	u := usage(req, rep)
	if rep.Usage != nil {
		u = *rep.Usage
	}
	if req.Stream {
		s.stream(w, req, id, rep, calls, finish, u)
		return
	}
	msg := map[string]any{"role": "assistant", "content": rep.Content}
	if rep.Reasoning != "" {
		msg["reasoning_content"] = rep.Reasoning
	}
	if len(calls) > 0 {
		msg["tool_calls"] = calls
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id": id, "object": "chat.completion", "created": time.Now().Unix(), "model": req.Model,
		"choices": []map[string]any{{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   u,
	})
}

func parseRequest(body []byte) (*Request, error) {
	req := &Request{Raw: body}
	if err := json.Unmarshal(body, &req.Fields); err != nil {
		return nil, fmt.Errorf("request body is not a JSON object: %v", err)
	}
	if err := json.Unmarshal(body, req); err != nil {
		return nil, fmt.Errorf("invalid chat completion request: %v", err)
	}
	if req.Model == "" {
		return nil, errors.New("you must provide a model parameter")
	}
	if len(req.Messages) == 0 {
		return nil, errors.New("messages must be a non-empty array")
	}
	return req, nil
}

// Usage is the token accounting: about four bytes per token.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func usage(req *Request, rep Reply) Usage {
	p := 0
	for _, m := range req.Messages {
		p += len(m.Content) + len(m.ReasoningContent) + 4
		for _, c := range m.ToolCalls {
			p += len(c.Function.Name) + len(c.Function.Arguments)
		}
	}
	c := len(rep.Content) + len(rep.Reasoning)
	for _, tc := range rep.Calls {
		c += len(tc.Name) + len(tc.Arguments)
	}
	u := Usage{PromptTokens: p/4 + 1, CompletionTokens: c/4 + 1}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return u
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	if msg == "" {
		msg = strings.ToLower(http.StatusText(code))
	}
	typ := "server_error"
	if code < 500 {
		typ = "invalid_request_error"
	}
	writeJSON(w, code, map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": code}})
}
