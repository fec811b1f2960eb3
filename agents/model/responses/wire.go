package responses

// The JSON of OpenAI's Responses API that this client sends and reads
// (https://platform.openai.com/docs/api-reference/responses).

// Statuses of a response object.
const (
	StatusCompleted  = "completed"
	StatusFailed     = "failed"
	StatusIncomplete = "incomplete"
	StatusCancelled  = "cancelled"
	StatusQueued     = "queued"
	StatusInProgress = "in_progress"
)

// CreateRequest is the body of POST /responses.
type CreateRequest struct {
	Model           string     `json:"model"`
	Input           []Message  `json:"input"`
	MaxOutputTokens int        `json:"max_output_tokens,omitempty"`
	Reasoning       *Reasoning `json:"reasoning,omitempty"`
	Temperature     *float64   `json:"temperature,omitempty"`
	TopP            *float64   `json:"top_p,omitempty"`
	Background      bool       `json:"background,omitempty"`
	Store           bool       `json:"store"`
}

// Message is an input message item (role system, developer, user or assistant).
type Message struct {
	Type    string `json:"type"` // "message"
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Reasoning configures a reasoning model.
type Reasoning struct {
	Effort string `json:"effort,omitempty"`
}

// Response is the response object (POST /responses, GET /responses/{id}).
type Response struct {
	ID                string      `json:"id"`
	Object            string      `json:"object"`
	Status            string      `json:"status"`
	Model             string      `json:"model"`
	Error             *ErrorBody  `json:"error"`
	IncompleteDetails *Incomplete `json:"incomplete_details"`
	Output            []Item      `json:"output"`
	Usage             *Usage      `json:"usage"`
}

// Incomplete says why a response stopped early (max_output_tokens, content_filter).
type Incomplete struct {
	Reason string `json:"reason"`
}

// Item is one output item: a "message" with output_text parts, or a
// "reasoning" item with summary parts.
type Item struct {
	Type    string `json:"type"`
	ID      string `json:"id,omitempty"`
	Role    string `json:"role,omitempty"`
	Status  string `json:"status,omitempty"`
	Content []Part `json:"content,omitempty"`
	Summary []Part `json:"summary,omitempty"`
}

// Part is an output_text, refusal or summary_text part.
type Part struct {
	Type    string `json:"type"`
	Text    string `json:"text,omitempty"`
	Refusal string `json:"refusal,omitempty"`
}

// Usage is the billed token counts; output includes reasoning tokens.
type Usage struct {
	InputTokens         int `json:"input_tokens"`
	OutputTokens        int `json:"output_tokens"`
	TotalTokens         int `json:"total_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
}

// ErrorBody is the error object, in an error reply ({"error": …}) and in
// a failed response.
type ErrorBody struct {
	Message string  `json:"message"`
	Type    string  `json:"type,omitempty"`
	Param   *string `json:"param,omitempty"`
	Code    *string `json:"code,omitempty"`
}

// ErrorReply is the body of a non-2xx reply.
type ErrorReply struct {
	Error ErrorBody `json:"error"`
}
