// Package model is the chat-completion client the agent loop talks to: one
// interface, an OpenAI-compatible implementation on go-openai, and named
// model configurations with the sampling defaults of the MASS harness.
package model

import (
	"context"
	"errors"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Defaults of the client: the sampling ones are the MASS paper's harness
// settings, listed in daemon/config/massd.example.yaml.
const (
	// DefaultContextWindow is the MASS harness's context length.
	DefaultContextWindow = 262144
	DefaultTemperature   = 0.6
	DefaultTopP          = 0.95
	DefaultTopK          = 20
	DefaultMaxTokens     = 32768
	DefaultTimeout       = 10 * time.Minute
	DefaultConcurrency   = 4
	DefaultMaxRetries    = 6
	DefaultBackoff       = 500 * time.Millisecond
)

// ErrEndpoint classifies failures of the model endpoint that survived every
// retry; the episode reports them as failure "model_error".
var ErrEndpoint = errors.New("model endpoint error")

// Request is one chat-completion call. Messages and Tools are sent verbatim.
type Request struct {
	Messages []openai.ChatCompletionMessage
	Tools    []openai.Tool
	// Seed, when set, replaces the configured sampling seed (an episode's
	// or a judgment's seed, passed through).
	Seed *int
}

// Response is the assistant's reply to one Request.
type Response struct {
	Message      openai.ChatCompletionMessage // role assistant: content, reasoning_content, tool_calls
	FinishReason string
	Usage        openai.Usage
	Attempts     int           // HTTP attempts including retries
	ModelTime    time.Duration // time spent waiting on the endpoint, retries and backoff included
}

// Client sends chat completions to one named model.
//
// Chat retries transient endpoint failures (429, 5xx, timeouts, connection
// errors) with backoff; those retries never count against an agent. It
// returns an error wrapping ErrEndpoint when retries are exhausted or the
// endpoint rejects the request, and ctx.Err() when ctx ends. Safe for
// concurrent use; the number of requests in flight is bounded per client.
type Client interface {
	// Name is the configured model name ("scripted", "qwen3-27b").
	Name() string
	// Sampling is what every request carries, for the recording.
	Sampling() Sampling
	// ExtraBody lists the non-standard fields added to every request body.
	ExtraBody() map[string]any
	// Model is the model id sent in requests.
	Model() string
	Chat(ctx context.Context, req Request) (Response, error)
}

// Sampling is the sampling configuration recorded with every request.
type Sampling struct {
	Temperature float64 `json:"temperature"`
	TopP        float64 `json:"top_p"`
	TopK        int     `json:"top_k"`
	MaxTokens   int     `json:"max_tokens"`
	Seed        *int    `json:"seed"`
}
