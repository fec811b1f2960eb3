package model

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// OpenAI is a Client for any OpenAI-compatible chat-completions endpoint
// (vLLM, SGLang, Ollama, llama.cpp's server) built on go-openai.
type OpenAI struct {
	cfg      Config
	sampling Sampling
	extra    map[string]any
	api      *openai.Client
	sem      chan struct{}
	log      *slog.Logger
}

var _ Client = (*OpenAI)(nil)

// New builds a client for cfg. The API key is resolved here and kept only
// inside the go-openai client's Authorization header.
func New(cfg Config, log *slog.Logger) (*OpenAI, error) {
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
	s := cfg.sampling()
	oc := openai.DefaultConfig(key)
	oc.BaseURL = cfg.BaseURL
	// top_k has no field in go-openai; the transport adds it to the JSON body.
	maxReply := cfg.MaxResponseBytes
	if maxReply == 0 {
		maxReply = MaxResponseBytes
	}
	oc.HTTPClient = &http.Client{Transport: &bodyExtender{base: http.DefaultTransport, fields: map[string]any{"top_k": s.TopK}, maxReply: maxReply}}
	n := cfg.MaxConcurrency
	if n == 0 {
		n = DefaultConcurrency
	}
	return &OpenAI{
		cfg:      cfg,
		sampling: s,
		extra:    map[string]any{"chat_template_kwargs": map[string]any{"enable_thinking": cfg.thinking()}},
		api:      openai.NewClientWithConfig(oc),
		sem:      make(chan struct{}, n),
		log:      log.With("model", cfg.Name),
	}, nil
}

// Name implements Client.
func (c *OpenAI) Name() string { return c.cfg.Name }

// Model implements Client.
func (c *OpenAI) Model() string { return c.cfg.Model }

// ContextWindow is the configured context length (DefaultContextWindow when unset).
func (c *OpenAI) ContextWindow() int {
	if c.cfg.ContextWindow > 0 {
		return c.cfg.ContextWindow
	}
	return DefaultContextWindow
}

// Sampling implements Client.
func (c *OpenAI) Sampling() Sampling { return c.sampling }

// ExtraBody implements Client.
func (c *OpenAI) ExtraBody() map[string]any { return c.extra }

// Chat implements Client.
func (c *OpenAI) Chat(ctx context.Context, req Request) (Response, error) {
	start := time.Now()
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return Response{}, ctx.Err()
	}
	defer func() { <-c.sem }()
	maxOut, err := c.cfg.Guard(ctx, req)
	if err != nil {
		return Response{}, err
	}
	creq := c.request(req, maxOut)
	resp, err := NewRetrier(c.cfg, c.log).Do(ctx, func(ctx context.Context) (Response, error) {
		r, err := c.once(ctx, creq)
		if err != nil && authStatus(err) {
			err = fmt.Errorf("%w: %w (check %s)", ErrAuth, err, c.cfg.KeySource())
		}
		return r, err
	})
	resp.ModelTime = time.Since(start)
	return resp, err
}

func (c *OpenAI) request(req Request, maxTokens int) openai.ChatCompletionRequest {
	r := openai.ChatCompletionRequest{
		Model:       c.cfg.Model,
		Messages:    req.Messages,
		Tools:       req.Tools,
		Temperature: float32(c.sampling.Temperature),
		TopP:        float32(c.sampling.TopP),
		//lint:ignore SA1019 the open servers (vLLM, SGLang, llama.cpp, Ollama) all read max_tokens
		MaxTokens:          maxTokens,
		Seed:               c.sampling.Seed,
		ChatTemplateKwargs: c.extra["chat_template_kwargs"].(map[string]any),
		Stream:             c.cfg.Stream,
		ReasoningEffort:    c.cfg.ReasoningEffort,
	}
	if req.Seed != nil {
		r.Seed = req.Seed
	}
	if c.cfg.Stream {
		r.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	}
	return r
}

// once is one HTTP attempt under the per-attempt timeout.
func (c *OpenAI) once(ctx context.Context, creq openai.ChatCompletionRequest) (Response, error) {
	timeout := c.cfg.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if creq.Stream {
		r, err := c.stream(actx, creq)
		if err == nil {
			err = CheckReply(r)
		}
		return r, err
	}
	out, err := c.api.CreateChatCompletion(actx, creq)
	if err != nil {
		return Response{}, err
	}
	if len(out.Choices) == 0 {
		return Response{}, errNoChoices
	}
	ch := out.Choices[0]
	msg := ch.Message
	msg.Role = openai.ChatMessageRoleAssistant
	r := Response{Message: msg, FinishReason: string(ch.FinishReason), Usage: out.Usage}
	return r, CheckReply(r)
}

var errNoChoices = errors.New("response has no choices")

// stream assembles a streamed completion into one message.
// A stream that ends before a finish_reason and the [DONE] line is
// ErrTruncatedStream, never a partial success.
func (c *OpenAI) stream(ctx context.Context, creq openai.ChatCompletionRequest) (Response, error) {
	end := &streamEnd{}
	ctx = context.WithValue(ctx, streamEndKey{}, end)
	st, err := c.api.CreateChatCompletionStream(ctx, creq)
	if err != nil {
		return Response{}, err
	}
	defer st.Close()
	var (
		r       = Response{Message: openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant}}
		content []byte
		reason  []byte
		calls   []openai.ToolCall
		args    [][]byte // each call's arguments, grown in place (not string +=)
	)
	for {
		chunk, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Response{}, err
		}
		if chunk.Usage != nil {
			r.Usage = *chunk.Usage
		}
		for _, ch := range chunk.Choices {
			content = append(content, ch.Delta.Content...)
			reason = append(reason, ch.Delta.ReasoningContent...)
			for _, tc := range ch.Delta.ToolCalls {
				i := len(calls)
				if tc.Index != nil {
					i = *tc.Index
				}
				if i < 0 || i >= maxStreamToolCalls {
					// An endpoint's index must not panic or balloon the slice.
					return Response{}, fmt.Errorf("stream: tool call index %d outside 0..%d", i, maxStreamToolCalls-1)
				}
				for len(calls) <= i {
					calls = append(calls, openai.ToolCall{Type: openai.ToolTypeFunction})
					args = append(args, nil)
				}
				if tc.ID != "" {
					calls[i].ID = tc.ID
				}
				if tc.Type != "" {
					calls[i].Type = tc.Type
				}
				calls[i].Function.Name += tc.Function.Name
				if args[i] = append(args[i], tc.Function.Arguments...); len(args[i]) > MaxToolArgBytes {
					return Response{}, fmt.Errorf("tool call %s passes %d bytes of arguments (MaxToolArgBytes): %w", calls[i].Function.Name, MaxToolArgBytes, ErrReplyCap)
				}
			}
			if ch.FinishReason != "" {
				r.FinishReason = string(ch.FinishReason)
			}
		}
	}
	for i := range calls {
		calls[i].Function.Arguments = string(args[i])
	}
	if r.FinishReason == "" || !end.done.Load() {
		return Response{}, fmt.Errorf("%w (finish_reason %q, [DONE] seen %v, %d content bytes so far)",
			ErrTruncatedStream, r.FinishReason, end.done.Load(), len(content))
	}
	r.Message.Content = string(content)
	r.Message.ReasoningContent = string(reason)
	r.Message.ToolCalls = calls
	return r, nil
}

// maxStreamToolCalls bounds the tool-call index a streamed delta may carry.
const maxStreamToolCalls = 1024

// authStatus reports go-openai's error for a refused key (401, 403).
func authStatus(err error) bool {
	var ae *openai.APIError
	var re *openai.RequestError
	switch {
	case errors.As(err, &ae):
		return ae.HTTPStatusCode == http.StatusUnauthorized || ae.HTTPStatusCode == http.StatusForbidden
	case errors.As(err, &re):
		return re.HTTPStatusCode == http.StatusUnauthorized || re.HTTPStatusCode == http.StatusForbidden
	}
	return false
}

// Retryable reports transient failures: 429, 5xx, timeouts, broken
// connections, truncated streams; never a refused key or a reply cap.
func Retryable(err error) bool {
	if errors.Is(err, ErrAuth) || errors.Is(err, ErrReplyCap) {
		return false
	}
	var pe *APIError
	if errors.As(err, &pe) {
		return pe.Temporary()
	}
	var ae *openai.APIError
	if errors.As(err, &ae) {
		return ae.HTTPStatusCode == http.StatusTooManyRequests || ae.HTTPStatusCode >= 500
	}
	var re *openai.RequestError
	if errors.As(err, &re) {
		if re.HTTPStatusCode == http.StatusTooManyRequests || re.HTTPStatusCode >= 500 {
			return true
		}
		if re.HTTPStatusCode != 0 {
			return false
		}
	}
	if errors.Is(err, ErrTruncatedStream) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, errNoChoices) || errors.Is(err, ErrBadReply) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	var oe *net.OpError
	return errors.As(err, &oe)
}
