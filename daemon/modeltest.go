package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/mass-dev/mass/agents/model"
	"github.com/mass-dev/mass/daemon/api"
)

// ModelTestTimeout bounds one `massctl model test`.
const ModelTestTimeout = 60 * time.Second

// TestModel sends the named model one short chat completion that offers an
// echo tool and reports whether it answered, whether it called the tool
// with valid JSON arguments, and how long it took. An unknown name wraps
// api.ErrNotFound; an endpoint failure is a result, not an error.
func (b *Builtins) TestModel(ctx context.Context, name string) (api.ModelTest, error) {
	if !b.Models.Has(name) {
		return api.ModelTest{}, fmt.Errorf("no model named %q; see massctl model list: %w", name, api.ErrNotFound)
	}
	res := api.ModelTest{Name: name}
	c, err := b.Models.Client(name)
	if err != nil {
		res.Error = err.Error()
		return res, nil
	}
	res.Model = c.Model()
	ctx, cancel := context.WithTimeout(ctx, ModelTestTimeout)
	defer cancel()
	tool := openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
		Name: "echo", Description: "Repeat a text back.",
		Parameters: map[string]any{"type": "object", "required": []string{"text"},
			"properties": map[string]any{"text": map[string]any{"type": "string", "description": "the text"}}}}}
	start := time.Now()
	resp, err := c.Chat(ctx, model.Request{Messages: []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleUser, Content: `Call the echo tool once with the text "ping".`}}, Tools: []openai.Tool{tool}})
	res.LatencyMS = float64(time.Since(start).Microseconds()) / 1000
	if err != nil {
		res.Error = err.Error()
		return res, nil
	}
	res.OK, res.Attempts, res.Tokens = true, resp.Attempts, resp.Usage.TotalTokens
	for _, tc := range resp.Message.ToolCalls {
		var args map[string]any
		if tc.Function.Name == "echo" && json.Unmarshal([]byte(tc.Function.Arguments), &args) == nil {
			res.ToolCalls = true
		}
	}
	res.Reply = resp.Message.Content
	if r := []rune(res.Reply); len(r) > 200 {
		res.Reply = string(r[:200]) + "…"
	}
	return res, nil
}
