// Package fakeopenai is a faithful OpenAI-compatible chat-completions server
// for tests and for the offline scripted model: real HTTP, JSON and SSE
// streaming, tool calls, reasoning_content, error codes and delays, with the
// replies chosen by a Policy.
package fakeopenai

import (
	"encoding/json"
	"time"
)

// Message is one chat message as the server received it.
type Message struct {
	Role             string     `json:"role"`
	Content          string     `json:"content"`
	ReasoningContent string     `json:"reasoning_content,omitempty"`
	Name             string     `json:"name,omitempty"`
	ToolCalls        []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID       string     `json:"tool_call_id,omitempty"`
}

// ToolCall is an OpenAI function tool call.
type ToolCall struct {
	ID       string   `json:"id"`
	Type     string   `json:"type"`
	Function Function `json:"function"`
}

// Function is the called function and its JSON-text arguments.
type Function struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Tool is an offered function tool.
type Tool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// Request is one received chat-completion request.
type Request struct {
	Model         string         `json:"model"`
	Messages      []Message      `json:"messages"`
	Tools         []Tool         `json:"tools"`
	Stream        bool           `json:"stream"`
	Seed          *int           `json:"seed"`
	StreamOptions *StreamOptions `json:"stream_options"`
	// Raw is the body exactly as received; Fields is its top level.
	Raw    []byte                     `json:"-"`
	Fields map[string]json.RawMessage `json:"-"`
	// Header carries the request headers (tests check Authorization).
	Header map[string]string `json:"-"`
}

// StreamOptions are the stream_options of a request.
type StreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// HasTool reports whether the request offers a tool named name.
func (r *Request) HasTool(name string) bool {
	for _, t := range r.Tools {
		if t.Function.Name == name {
			return true
		}
	}
	return false
}

// Turn is the number of assistant messages already in the conversation.
func (r *Request) Turn() int {
	n := 0
	for _, m := range r.Messages {
		if m.Role == "assistant" {
			n++
		}
	}
	return n
}

// FirstUser is the content of the first user message.
func (r *Request) FirstUser() string {
	for _, m := range r.Messages {
		if m.Role == "user" {
			return m.Content
		}
	}
	return ""
}

// LastTool is the content of the last message when it is a tool result.
func (r *Request) LastTool() (string, bool) {
	if n := len(r.Messages); n > 0 && r.Messages[n-1].Role == "tool" {
		return r.Messages[n-1].Content, true
	}
	return "", false
}

// Call is a tool call the policy wants the model to make.
type Call struct {
	Name      string
	Arguments string // JSON text, sent verbatim (may be malformed on purpose)
}

// Reply is what the fake model answers to one request.
type Reply struct {
	Content   string
	Reasoning string
	Calls     []Call
	// FinishReason defaults to "tool_calls" when Calls is set, else "stop".
	FinishReason string
	// Status, when not 0 or 200, answers with that HTTP error and Error as message.
	Status int
	Error  string
	// Delay is waited before answering (or until the client goes away).
	Delay time.Duration
	// Hangup closes the connection without an answer.
	Hangup bool
}

// Policy chooses the reply to a request. It is called concurrently.
type Policy func(r *Request) Reply
