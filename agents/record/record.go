// Package record writes and reads an episode's api_requests.jsonl: one line
// per chat-completion call with the exact request sent and the response
// received, appended durably in group-committed batches.
package record

import (
	"encoding/json"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/mass-dev/mass/agents/model"
)

// Roles of a thread.
const (
	RoleOrchestrator = "orchestrator"
	RoleWorker       = "worker"
	RoleAuxiliary    = "auxiliary"
)

// Statuses of a call.
const (
	StatusOK    = "ok"
	StatusError = "error"
)

// Record is one line of api_requests.jsonl (docs/formats.md).
type Record struct {
	Seq        int64     `json:"seq"`
	TS         time.Time `json:"ts"`
	TSEnd      time.Time `json:"ts_end"`
	Episode    string    `json:"episode"`
	Agent      string    `json:"agent"`
	Thread     string    `json:"thread"`
	Role       string    `json:"role"`
	Parent     string    `json:"parent"`
	Request    Request   `json:"request"`
	Response   *Response `json:"response"`
	Status     string    `json:"status"`
	Error      string    `json:"error"`
	DurationMS float64   `json:"duration_ms"`
	Attempts   int       `json:"attempts,omitempty"`
	// Purpose names a call that is not one of the agent's turns:
	// PurposeCompression for a history-compression side query.
	Purpose string `json:"purpose,omitempty"`
	// Compression is set on an agent's first call after its history was
	// compressed: every message of that request came from before.
	Compression *Compression `json:"compression,omitempty"`
}

// PurposeCompression marks the side query that summarizes an agent's history.
const PurposeCompression = "chat_compression"

// Compression says how a compressed history was made (agents/agent, compress.go).
type Compression struct {
	SummarySeq int64 `json:"summary_seq"` // seq of the side query that wrote the summary
	Compressed int   `json:"compressed"`  // messages of the old history the summary replaced
	Kept       int   `json:"kept"`        // messages of the old history kept after it
	// TokensBefore is the prompt size that crossed the threshold; Threshold
	// is threshold × context window, in tokens.
	TokensBefore int `json:"tokens_before"`
	Threshold    int `json:"threshold"`
}

// Request is the chat-completion request exactly as sent.
type Request struct {
	Model     string                         `json:"model"`
	Messages  []openai.ChatCompletionMessage `json:"messages"`
	Tools     []openai.Tool                  `json:"tools"`
	Sampling  model.Sampling                 `json:"sampling"`
	ExtraBody map[string]any                 `json:"extra_body,omitempty"`
}

// Response is the assistant message received.
type Response struct {
	Content          string            `json:"content"`
	ReasoningContent string            `json:"reasoning_content"`
	ToolCalls        []openai.ToolCall `json:"tool_calls"`
	FinishReason     string            `json:"finish_reason"`
	Usage            openai.Usage      `json:"usage"`
}

// FromModel converts a model response for the recording.
func FromModel(r model.Response) *Response {
	return &Response{
		Content:          r.Message.Content,
		ReasoningContent: r.Message.ReasoningContent,
		ToolCalls:        r.Message.ToolCalls,
		FinishReason:     r.FinishReason,
		Usage:            r.Usage,
	}
}

// Message is the assistant message a response becomes in the next request.
func (r *Response) Message() openai.ChatCompletionMessage {
	return openai.ChatCompletionMessage{
		Role:             openai.ChatMessageRoleAssistant,
		Content:          r.Content,
		ReasoningContent: r.ReasoningContent,
		ToolCalls:        r.ToolCalls,
	}
}

func encode(r Record) ([]byte, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
