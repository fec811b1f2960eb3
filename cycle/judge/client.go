package judge

import (
	"context"
	"fmt"

	openai "github.com/sashabaranov/go-openai"

	"github.com/mass-dev/mass/agents/model"
)

// Clients is a Model on massd's model clients, looked up by name.
type Clients func(name string) (model.Client, error)

// Chat sends msgs to the named model with the seed as sampling seed.
func (c Clients) Chat(ctx context.Context, name string, msgs []Message, seed int64) (Reply, error) {
	cl, err := c(name)
	if err != nil {
		return Reply{}, fmt.Errorf("model %q: %w", name, err)
	}
	om := make([]openai.ChatCompletionMessage, len(msgs))
	for i, m := range msgs {
		om[i] = openai.ChatCompletionMessage{Role: m.Role, Content: m.Content}
	}
	s := int(seed & 0x7fffffff)
	resp, err := cl.Chat(ctx, model.Request{Messages: om, Seed: &s})
	if err != nil {
		return Reply{}, err
	}
	return Reply{Content: resp.Message.Content, PromptTokens: int64(resp.Usage.PromptTokens),
		CompletionTokens: int64(resp.Usage.CompletionTokens), ModelTime: resp.ModelTime}, nil
}
