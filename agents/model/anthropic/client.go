package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/mass-dev/mass/agents/model"
)

func init() { model.RegisterProvider(model.ProviderAnthropic, open) }

func open(cfg model.Config, log *slog.Logger) (model.Client, error) { return New(cfg, log) }

// Client speaks the Messages API for one configured model, always
// streaming. Safe for concurrent use; requests in flight are bounded by
// max_concurrency (model.Endpoint).
type Client struct {
	model.Endpoint
	url string
}

var _ model.Client = (*Client)(nil)

// New builds the client; the key is read here and kept only for the
// x-api-key header. With a reasoning_effort no temperature is sent.
func New(cfg model.Config, log *slog.Logger) (*Client, error) {
	ep, err := model.NewEndpoint(cfg, log, func(cfg model.Config, s *model.Sampling) {
		if cfg.Temperature != nil && cfg.ReasoningEffort == "" {
			s.Temperature = *cfg.Temperature
		}
	})
	if err != nil {
		return nil, err
	}
	return &Client{Endpoint: ep, url: strings.TrimRight(ep.Config().BaseURL, "/") + "/v1/messages"}, nil
}

// ExtraBody implements model.Client.
func (c *Client) ExtraBody() map[string]any {
	cfg := c.Config()
	out := map[string]any{"stream": true}
	if cfg.ReasoningEffort != "" {
		out["thinking"] = map[string]any{"type": "adaptive"}
		out["output_config"] = map[string]any{"effort": cfg.ReasoningEffort}
	}
	return out
}

// Body is the JSON body of POST /v1/messages for req: system messages
// become the system prompt; with a reasoning_effort, thinking is adaptive
// and no temperature is sent (the API refuses one with thinking).
func (c *Client) Body(req model.Request, maxTokens int) ([]byte, error) {
	cfg := c.Config()
	if len(req.Tools) > 0 {
		return nil, fmt.Errorf("%s model %s: tool calls are not supported by this client; use the model as a bundle-mode judge", model.ProviderAnthropic, cfg.Name)
	}
	r := Request{Model: cfg.Model, MaxTokens: maxTokens, Stream: true}
	if cfg.ReasoningEffort != "" {
		r.Thinking = &Thinking{Type: "adaptive"}
		r.OutputConfig = &OutputConfig{Effort: cfg.ReasoningEffort}
	} else {
		r.Temperature = cfg.Temperature
	}
	var system []string
	for _, m := range req.Messages {
		switch {
		case len(m.MultiContent) > 0 || len(m.ToolCalls) > 0:
			return nil, fmt.Errorf("%s model %s: message with parts or tool calls is not supported", model.ProviderAnthropic, cfg.Name)
		case m.Role == "system" || m.Role == "developer":
			system = append(system, m.Content)
		case m.Role == "user" || m.Role == "assistant":
			r.Messages = append(r.Messages, Message{Role: m.Role, Content: m.Content})
		default:
			return nil, fmt.Errorf("%s model %s: message role %q is not supported", model.ProviderAnthropic, cfg.Name, m.Role)
		}
	}
	if len(r.Messages) == 0 || r.Messages[0].Role != "user" {
		return nil, fmt.Errorf("%s model %s: the conversation must start with a user message", model.ProviderAnthropic, cfg.Name)
	}
	r.System = strings.Join(system, "\n\n")
	return json.Marshal(r)
}

// Chat implements model.Client. Every retry sends the same body.
// A request that cannot fit the context window is refused unsent
// (model.Config.Guard).
func (c *Client) Chat(ctx context.Context, req model.Request) (model.Response, error) {
	return c.Send(ctx, req, c.Body, c.once)
}

// once is one streamed attempt under the per-attempt timeout.
func (c *Client) once(ctx context.Context, body []byte) (model.Response, error) {
	ctx, cancel := context.WithTimeout(ctx, c.Config().Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return model.Response{}, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Anthropic-Version", APIVersion)
	c.SetKey(req, "X-Api-Key", "")
	resp, err := c.Do(req)
	if err != nil {
		return model.Response{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		b, err := model.ReadBody(resp.Body, c.Config().ReplyLimit())
		if err != nil {
			return model.Response{}, err
		}
		return model.Response{}, c.apiError(resp, b)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		return model.Response{}, fmt.Errorf("reply is %q, not an event stream: %w", ct, model.ErrBadReply)
	}
	r, err := c.read(model.CapReader(resp.Body, c.Config().ReplyLimit()))
	if err != nil {
		return model.Response{}, err
	}
	return r, model.CheckReply(r)
}

func (c *Client) apiError(resp *http.Response, b []byte) *model.APIError {
	e := c.APIError(model.ProviderAnthropic, resp, "Request-Id", b)
	var er ErrorReply
	if json.Unmarshal(b, &er) == nil && er.Error.Type != "" {
		e.Type, e.Message = er.Error.Type, c.Redact(er.Error.Message)
		if er.RequestID != "" {
			e.RequestID = er.RequestID
		}
	}
	return e
}
