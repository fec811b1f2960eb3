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
// concurrent use; requests in flight are bounded by max_concurrency
// (model.Endpoint).
type Client struct {
	model.Endpoint
	base string
}

var _ model.Client = (*Client)(nil)

// New builds the client; the key is read here and kept only for the
// Authorization header.
func New(cfg model.Config, log *slog.Logger) (*Client, error) {
	ep, err := model.NewEndpoint(cfg, log, func(cfg model.Config, s *model.Sampling) {
		if cfg.Temperature != nil {
			s.Temperature = *cfg.Temperature
		}
		if cfg.TopP != nil {
			s.TopP = *cfg.TopP
		}
	})
	if err != nil {
		return nil, err
	}
	return &Client{Endpoint: ep, base: strings.TrimRight(ep.Config().BaseURL, "/")}, nil
}

// ExtraBody implements model.Client.
func (c *Client) ExtraBody() map[string]any {
	cfg := c.Config()
	out := map[string]any{"background": cfg.Background}
	if cfg.ReasoningEffort != "" {
		out["reasoning"] = map[string]any{"effort": cfg.ReasoningEffort}
	}
	return out
}

// Body is the JSON body of POST /responses for req.
func (c *Client) Body(req model.Request, maxTokens int) ([]byte, error) {
	cfg := c.Config()
	if len(req.Tools) > 0 {
		return nil, fmt.Errorf("%s model %s: tool calls are not supported by this client; use the model as a bundle-mode judge", model.ProviderOpenAIResponses, cfg.Name)
	}
	r := CreateRequest{Model: cfg.Model, MaxOutputTokens: maxTokens, Temperature: cfg.Temperature,
		TopP: cfg.TopP, Background: cfg.Background, Store: cfg.Background}
	if cfg.ReasoningEffort != "" {
		r.Reasoning = &Reasoning{Effort: cfg.ReasoningEffort}
	}
	for _, m := range req.Messages {
		if len(m.MultiContent) > 0 || len(m.ToolCalls) > 0 || m.Role == "tool" {
			return nil, fmt.Errorf("%s model %s: message role %s with parts or tool calls is not supported", model.ProviderOpenAIResponses, cfg.Name, m.Role)
		}
		r.Input = append(r.Input, Message{Type: "message", Role: m.Role, Content: m.Content})
	}
	return json.Marshal(r)
}

// Chat implements model.Client. Every retry sends the same body.
// A request that cannot fit the context window is refused unsent
// (model.Config.Guard).
func (c *Client) Chat(ctx context.Context, req model.Request) (model.Response, error) {
	return c.Send(ctx, req, c.Body, c.once)
}

// once is one attempt: the POST, then in background mode the polls.
func (c *Client) once(ctx context.Context, body []byte) (model.Response, error) {
	cfg := c.Config()
	var r Response
	if err := c.call(ctx, http.MethodPost, c.base+"/responses", body, &r); err != nil {
		return model.Response{}, err
	}
	// The polls together get the per-attempt timeout, as one long request
	// would; a response still running then is an error not retried (a new
	// request would start, and bill, another response).
	deadline := time.Now().Add(cfg.Timeout)
	for r.Status == StatusQueued || r.Status == StatusInProgress {
		if !cfg.Background {
			return model.Response{}, fmt.Errorf("response %s is %s though background mode is off: %w", r.ID, r.Status, model.ErrBadReply)
		}
		if time.Now().After(deadline) {
			return model.Response{}, fmt.Errorf("background response %s still %s after the %s timeout", r.ID, r.Status, cfg.Timeout)
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
	cfg := c.Config()
	id := r.ID
	if id == "" {
		return fmt.Errorf("background response has no id: %w", model.ErrBadReply)
	}
	for fails := 0; ; {
		select {
		case <-time.After(cfg.PollInterval):
		case <-ctx.Done():
			return ctx.Err()
		}
		var next Response
		err := c.call(ctx, http.MethodGet, c.base+"/responses/"+url.PathEscape(id), nil, &next)
		if err == nil {
			*r = next
			return nil
		}
		if fails++; !model.Retryable(err) || fails > cfg.MaxRetries || ctx.Err() != nil {
			return fmt.Errorf("poll response %s: %w", id, err)
		}
		c.Log().Warn("poll retry", "response", id, "err", err)
	}
}
