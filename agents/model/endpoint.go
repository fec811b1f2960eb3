package model

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// Endpoint is what the clients of the hosted HTTP APIs (anthropic,
// responses) share: one configured model, its API key, the sampling sent,
// the HTTP client and the max_concurrency bound. A client embeds it, which
// gives it Name, Model, Sampling and ContextWindow, and runs each request
// through Send. The key never leaves it but as a header (SetKey). Safe for
// concurrent use.
type Endpoint struct {
	cfg      Config
	key      string
	sampling Sampling
	http     *http.Client
	sem      chan struct{}
	log      *slog.Logger
}

// NewEndpoint checks cfg (with its defaults) and reads its API key. The
// sampling sent is the agent's max tokens and what sample adds.
func NewEndpoint(cfg Config, log *slog.Logger, sample func(Config, *Sampling)) (Endpoint, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return Endpoint{}, err
	}
	key, err := cfg.APIKey()
	if err != nil {
		return Endpoint{}, err
	}
	if log == nil {
		log = slog.Default()
	}
	s := Sampling{MaxTokens: cfg.MaxTokensFor(RoleAgent)}
	if sample != nil {
		sample(cfg, &s)
	}
	return Endpoint{cfg: cfg, key: key, sampling: s, http: &http.Client{},
		sem: make(chan struct{}, cfg.MaxConcurrency), log: log.With("model", cfg.Name)}, nil
}

// Config is the model's configuration, defaults applied.
func (e *Endpoint) Config() Config { return e.cfg }

// Name implements Client.
func (e *Endpoint) Name() string { return e.cfg.Name }

// Model implements Client.
func (e *Endpoint) Model() string { return e.cfg.Model }

// Sampling implements Client: what is sent (the hosted APIs take no seed).
func (e *Endpoint) Sampling() Sampling { return e.sampling }

// ContextWindow is the configured context length.
func (e *Endpoint) ContextWindow() int {
	if e.cfg.ContextWindow > 0 {
		return e.cfg.ContextWindow
	}
	return DefaultContextWindow
}

// Log is the model's logger.
func (e *Endpoint) Log() *slog.Logger { return e.log }

// Do sends one HTTP request.
func (e *Endpoint) Do(req *http.Request) (*http.Response, error) { return e.http.Do(req) }

// SetKey sets header name to prefix + the API key, when there is one.
func (e *Endpoint) SetKey(req *http.Request, name, prefix string) {
	if e.key != "" {
		req.Header.Set(name, prefix+e.key)
	}
}

// Redact removes the API key from s (a provider's message may echo it).
func (e *Endpoint) Redact(s string) string { return Redact(s, e.key) }

// Send is a client's Chat: a request that cannot fit the context window is
// refused unsent (Config.Guard); otherwise body builds its JSON once, Send
// waits for one of the max_concurrency slots and runs attempt under the
// retry policy, with the same body every time.
func (e *Endpoint) Send(ctx context.Context, req Request, body func(Request, int) ([]byte, error),
	attempt func(context.Context, []byte) (Response, error)) (Response, error) {
	maxTokens, err := e.cfg.Guard(ctx, req)
	if err != nil {
		return Response{}, err
	}
	b, err := body(req, maxTokens)
	if err != nil {
		return Response{}, err
	}
	select {
	case e.sem <- struct{}{}:
	case <-ctx.Done():
		return Response{}, ctx.Err()
	}
	defer func() { <-e.sem }()
	return NewRetrier(e.cfg, e.log).Do(ctx, func(ctx context.Context) (Response, error) {
		return attempt(ctx, b)
	})
}

// APIError is the error of a non-2xx reply with what every provider's
// carries (status, the request id from header requestID, retry-after,
// x-should-retry, where the key came from) and, as its message, the
// start of body redacted; the client then fills in Type and Message from
// its provider's error body when it has one.
func (e *Endpoint) APIError(provider string, resp *http.Response, requestID string, body []byte) *APIError {
	return &APIError{Provider: provider, Model: e.cfg.Name, Status: resp.StatusCode,
		RequestID: resp.Header.Get(requestID), RetryAfter: RetryAfter(resp.Header, time.Now()), KeySource: e.cfg.KeySource(),
		ShouldRetry: ShouldRetryHeader(resp.Header), Message: e.Redact(strings.TrimSpace(string(body[:min(len(body), 200)])))}
}
