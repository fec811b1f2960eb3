package anthropic

// The JSON of Anthropic's Messages API that this client sends and reads
// (https://docs.anthropic.com/en/api/messages, .../messages-streaming).

// APIVersion is the anthropic-version header sent with every request.
const APIVersion = "2023-06-01"

// Request is the body of POST /v1/messages.
type Request struct {
	Model        string        `json:"model"`
	MaxTokens    int           `json:"max_tokens"`
	System       string        `json:"system,omitempty"`
	Messages     []Message     `json:"messages"`
	Stream       bool          `json:"stream"`
	Temperature  *float64      `json:"temperature,omitempty"`
	Thinking     *Thinking     `json:"thinking,omitempty"`
	OutputConfig *OutputConfig `json:"output_config,omitempty"`
}

// Message is one user or assistant turn with text content.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Thinking turns extended thinking on: type "adaptive" lets the model
// decide how much to think under output_config.effort.
type Thinking struct {
	Type string `json:"type"`
}

// OutputConfig carries the effort (low, medium, high, xhigh, max).
type OutputConfig struct {
	Effort string `json:"effort,omitempty"`
}

// Event is one server-sent event's data, by its type.
type Event struct {
	Type         string        `json:"type"`
	Message      *MessageStart `json:"message,omitempty"`       // message_start
	Index        int           `json:"index"`                   // content_block_*
	ContentBlock *Block        `json:"content_block,omitempty"` // content_block_start
	Delta        *Delta        `json:"delta,omitempty"`         // content_block_delta, message_delta
	Usage        *Usage        `json:"usage,omitempty"`         // message_delta
	Error        *ErrorBody    `json:"error,omitempty"`         // error
}

// MessageStart is the message object of message_start.
type MessageStart struct {
	ID         string  `json:"id"`
	Type       string  `json:"type"`
	Role       string  `json:"role"`
	Model      string  `json:"model"`
	Content    []Block `json:"content"`
	StopReason *string `json:"stop_reason"`
	Usage      Usage   `json:"usage"`
}

// Block is a content block: text, thinking, redacted_thinking, tool_use.
type Block struct {
	Type      string `json:"type"`
	Text      string `json:"text,omitempty"`
	Thinking  string `json:"thinking,omitempty"`
	Signature string `json:"signature,omitempty"`
}

// Delta is a content_block_delta's delta (text_delta, thinking_delta,
// signature_delta, input_json_delta) or a message_delta's (stop_reason).
type Delta struct {
	Type       string  `json:"type,omitempty"`
	Text       string  `json:"text,omitempty"`
	Thinking   string  `json:"thinking,omitempty"`
	Signature  string  `json:"signature,omitempty"`
	StopReason *string `json:"stop_reason,omitempty"`
}

// Usage is the billed token counts; message_delta's are cumulative.
type Usage struct {
	InputTokens              int `json:"input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	OutputTokens             int `json:"output_tokens"`
}

// ErrorBody is the error object of an error reply or an error event.
type ErrorBody struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// ErrorReply is the body of a non-2xx reply.
type ErrorReply struct {
	Type      string    `json:"type"` // "error"
	Error     ErrorBody `json:"error"`
	RequestID string    `json:"request_id,omitempty"`
}

// StatusOf is the HTTP status the API gives an error type (an error event
// in a stream carries only the type).
func StatusOf(errType string) int {
	switch errType {
	case "invalid_request_error":
		return 400
	case "authentication_error":
		return 401
	case "permission_error":
		return 403
	case "not_found_error":
		return 404
	case "request_too_large":
		return 413
	case "rate_limit_error":
		return 429
	case "overloaded_error":
		return 529
	}
	return 500 // api_error and anything new
}
