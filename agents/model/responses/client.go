package responses

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mass-dev/mass/agents/model"
)

func init() { model.RegisterProvider(model.ProviderOpenAIResponses, open) }

func open(cfg model.Config, log *slog.Logger) (model.Client, error) { return New(cfg, log) }

// Client speaks the Responses API for one configured model. Safe for
// concurrent use; requests in flight are bounded by max_concurrency.
type Client struct {
	cfg      model.Config
	key      string
	base     string
	sampling model.Sampling
	http     *http.Client
	sem      chan struct{}
	log      *slog.Logger
}

var _ model.Client = (*Client)(nil)

// New builds the client; the key is read here and kept only for the
// Authorization header.
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
	if cfg.Temperature != nil {
		s.Temperature = *cfg.Temperature
	}
	if cfg.TopP != nil {
		s.TopP = *cfg.TopP
	}
	return &Client{cfg: cfg, key: key, base: strings.TrimRight(cfg.BaseURL, "/"), sampling: s,
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
	out := map[string]any{"background": c.cfg.Background}
	if c.cfg.ReasoningEffort != "" {
		out["reasoning"] = map[string]any{"effort": c.cfg.ReasoningEffort}
	}
	return out
}

// Body is the JSON body of POST /responses for req.
func (c *Client) Body(req model.Request, maxTokens int) ([]byte, error) {
	if len(req.Tools) > 0 {
		return nil, fmt.Errorf("%s model %s: tool calls are not supported by this client; use the model as a bundle-mode judge", model.ProviderOpenAIResponses, c.cfg.Name)
	}
	r := CreateRequest{Model: c.cfg.Model, MaxOutputTokens: maxTokens, Temperature: c.cfg.Temperature,
		TopP: c.cfg.TopP, Background: c.cfg.Background, Store: c.cfg.Background}
	if c.cfg.ReasoningEffort != "" {
		r.Reasoning = &Reasoning{Effort: c.cfg.ReasoningEffort}
	}
	for _, m := range req.Messages {
		if len(m.MultiContent) > 0 || len(m.ToolCalls) > 0 || m.Role == "tool" {
			return nil, fmt.Errorf("%s model %s: message role %s with parts or tool calls is not supported", model.ProviderOpenAIResponses, c.cfg.Name, m.Role)
		}
		r.Input = append(r.Input, Message{Type: "message", Role: m.Role, Content: m.Content})
	}
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

// once is one attempt: the POST, then in background mode the polls.
func (c *Client) once(ctx context.Context, body []byte) (model.Response, error) {
	var r Response
	if err := c.call(ctx, http.MethodPost, c.base+"/responses", body, &r); err != nil {
		return model.Response{}, err
	}
	// The polls together get the per-attempt timeout, as one long request
	// would; a response still running then is an error not retried (a new
	// request would start, and bill, another response).
	deadline := time.Now().Add(c.cfg.Timeout)
	for r.Status == StatusQueued || r.Status == StatusInProgress {
		if !c.cfg.Background {
			return model.Response{}, fmt.Errorf("response %s is %s though background mode is off: %w", r.ID, r.Status, model.ErrBadReply)
		}
		if time.Now().After(deadline) {
			return model.Response{}, fmt.Errorf("background response %s still %s after the %s timeout", r.ID, r.Status, c.cfg.Timeout)
		}
		if err := c.poll(ctx, &r); err != nil {
			return model.Response{}, err
		}
	}
	return c.result(r)
}

// poll waits PollInterval and reads the response again; transient poll
// failures are polled through, up to max_retries in a row.
func (c *Client) poll(ctx context.Context, r *Response) error {
	id := r.ID
	if id == "" {
		return fmt.Errorf("background response has no id: %w", model.ErrBadReply)
	}
	for fails := 0; ; {
		select {
		case <-time.After(c.cfg.PollInterval):
		case <-ctx.Done():
			return ctx.Err()
		}
		var next Response
		err := c.call(ctx, http.MethodGet, c.base+"/responses/"+url.PathEscape(id), nil, &next)
		if err == nil {
			*r = next
			return nil
		}
		if fails++; !model.Retryable(err) || fails > c.cfg.MaxRetries || ctx.Err() != nil {
			return fmt.Errorf("poll response %s: %w", id, err)
		}
		c.log.Warn("poll retry", "response", id, "err", err)
	}
}
