package judge

import (
	"context"
	"time"
)

// Message is one chat message of a role call (evaluator or optimizer).
type Message struct {
	Role    string `json:"role"` // system, user, assistant
	Content string `json:"content"`
}

// Reply is a model's answer to one call.
type Reply struct {
	Content          string
	PromptTokens     int64
	CompletionTokens int64
	ModelTime        time.Duration
}

// Model makes one chat-completion call of a named model with a sampling
// seed. The composition package implements it on agents/model.
type Model interface {
	Chat(ctx context.Context, model string, msgs []Message, seed int64) (Reply, error)
}
