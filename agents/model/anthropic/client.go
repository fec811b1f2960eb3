package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/mass-dev/mass/agents/model"
)

func init() { model.RegisterProvider(model.ProviderAnthropic, open) }

func open(cfg model.Config, log *slog.Logger) (model.Client, error) { return New(cfg, log) }

// Client speaks the Messages API for one configured model, always
// streaming. Safe for concurrent use; requests in flight are bounded by
// max_concurrency.
type Client struct {
	cfg      model.Config
	key      string
	url      string
	sampling model.Sampling
	http     *http.Client
	sem      chan struct{}
	log      *slog.Logger
}

var _ model.Client = (*Client)(nil)

// New builds the client; the key is read here and kept only for the
// x-api-key header.
func New(cfg model.Config, log *slog.Logger) (*Client, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	key, err := cfg.APIKey()
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	s := model.Sampling{MaxTokens: cfg.MaxTokensFor(model.RoleAgent)}
	if cfg.Temperature != nil && cfg.ReasoningEffort == "" {
		s.Temperature = *cfg.Temperature
	}
	return &Client{cfg: cfg, key: key, url: strings.TrimRight(cfg.BaseURL, "/") + "/v1/messages", sampling: s,
		http: &http.Client{}, sem: make(chan struct{}, cfg.MaxConcurrency), log: log.With("model", cfg.Name)}, nil
}

// Name implements model.Client.
func (c *Client) Name() string { return c.cfg.Name }

// Model implements model.Client.
func (c *Client) Model() string { return c.cfg.Model }

// Sampling implements model.Client: what is sent (the API takes no seed).
func (c *Client) Sampling() model.Sampling { return c.sampling }

// ContextWindow is the configured context length.
func (c *Client) ContextWindow() int {
	if c.cfg.ContextWindow > 0 {
		return c.cfg.ContextWindow
	}
	return model.DefaultContextWindow
}

// ExtraBody implements model.Client.
func (c *Client) ExtraBody() map[string]any {
	out := map[string]any{"stream": true}
	if c.cfg.ReasoningEffort != "" {
		out["thinking"] = map[string]any{"type": "adaptive"}
		out["output_config"] = map[string]any{"effort": c.cfg.ReasoningEffort}
	}
	return out
}

// Body is the JSON body of POST /v1/messages for req: system messages
// become the system prompt; with a reasoning_effort, thinking is adaptive
// and no temperature is sent (the API refuses one with thinking).
func (c *Client) Body(req model.Request, maxTokens int) ([]byte, error) {
	if len(req.Tools) > 0 {
		return nil, fmt.Errorf("%s model %s: tool calls are not supported by this client; use the model as a bundle-mode judge", model.ProviderAnthropic, c.cfg.Name)
	}
	r := Request{Model: c.cfg.Model, MaxTokens: maxTokens, Stream: true}
	if c.cfg.ReasoningEffort != "" {
		r.Thinking = &Thinking{Type: "adaptive"}
		r.OutputConfig = &OutputConfig{Effort: c.cfg.ReasoningEffort}
	} else {
		r.Temperature = c.cfg.Temperature
	}
	var system []string
	for _, m := range req.Messages {
		switch {
		case len(m.MultiContent) > 0 || len(m.ToolCalls) > 0:
			return nil, fmt.Errorf("%s model %s: message with parts or tool calls is not supported", model.ProviderAnthropic, c.cfg.Name)
		case m.Role == "system" || m.Role == "developer":
			system = append(system, m.Content)
		case m.Role == "user" || m.Role == "assistant":
			r.Messages = append(r.Messages, Message{Role: m.Role, Content: m.Content})
		default:
			return nil, fmt.Errorf("%s model %s: message role %q is not supported", model.ProviderAnthropic, c.cfg.Name, m.Role)
		}
	}
	if len(r.Messages) == 0 || r.Messages[0].Role != "user" {
		return nil, fmt.Errorf("%s model %s: the conversation must start with a user message", model.ProviderAnthropic, c.cfg.Name)
	}
	r.System = strings.Join(system, "\n\n")
	return json.Marshal(r)
}

// Chat implements model.Client. Every retry sends the same body.
// A request that cannot fit the context window is refused unsent
// (model.Config.Guard).
func (c *Client) Chat(ctx context.Context, req model.Request) (model.Response, error) {
	maxTokens, err := c.cfg.Guard(ctx, req)
	if err != nil {
		return model.Response{}, err
	}
	body, err := c.Body(req, maxTokens)
	if err != nil {
		return model.Response{}, err
	}
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return model.Response{}, ctx.Err()
	}
	defer func() { <-c.sem }()
	return model.NewRetrier(c.cfg, c.log).Do(ctx, func(ctx context.Context) (model.Response, error) {
		return c.once(ctx, body)
	})
}

// once is one streamed attempt under the per-attempt timeout.
func (c *Client) once(ctx context.Context, body []byte) (model.Response, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return model.Response{}, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Anthropic-Version", APIVersion)
	if c.key != "" {
		req.Header.Set("X-Api-Key", c.key)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return model.Response{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		b, err := model.ReadBody(resp.Body, c.cfg.ReplyLimit())
		if err != nil {
			return model.Response{}, err
		}
		return model.Response{}, c.apiError(resp, b)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		return model.Response{}, fmt.Errorf("reply is %q, not an event stream: %w", ct, model.ErrBadReply)
	}
	r, err := c.read(model.CapReader(resp.Body, c.cfg.ReplyLimit()))
	if err != nil {
		return model.Response{}, err
	}
	return r, model.CheckReply(r)
}

func (c *Client) apiError(resp *http.Response, b []byte) *model.APIError {
	e := &model.APIError{Provider: model.ProviderAnthropic, Model: c.cfg.Name, Status: resp.StatusCode,
		RequestID: resp.Header.Get("Request-Id"), RetryAfter: model.RetryAfter(resp.Header, time.Now()), KeySource: c.cfg.KeySource(),
		ShouldRetry: model.ShouldRetryHeader(resp.Header)}
	var er ErrorReply
	if json.Unmarshal(b, &er) == nil && er.Error.Type != "" {
		e.Type, e.Message = er.Error.Type, model.Redact(er.Error.Message, c.key)
		if er.RequestID != "" {
			e.RequestID = er.RequestID
		}
	} else {
		e.Message = model.Redact(strings.TrimSpace(string(b[:min(len(b), 200)])), c.key)
	}
	return e
}
