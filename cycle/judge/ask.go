package judge

import (
	"context"
	"fmt"
	"time"
)

// Usage counts the calls of one role request (flattened into result files).
type Usage struct {
	Attempts         int           `json:"attempts"`
	Errors           []string      `json:"errors,omitempty"`
	PromptTokens     int64         `json:"prompt_tokens"`
	CompletionTokens int64         `json:"completion_tokens"`
	ModelTime        time.Duration `json:"model_time_ns"`
}

// Ask calls the model and parses its reply with parse, retrying with the
// parse error shown to the model until MaxAttempts replies were read. It
// counts into u and returns the last error when every attempt failed.
func Ask[T any](ctx context.Context, m Model, model string, msgs []Message, seed int64, u *Usage, parse func(string) (T, error)) (T, error) {
	return AskN(ctx, m, model, msgs, seed, MaxAttempts, u, parse)
}

// AskN is Ask with at most attempts replies (at least one).
func AskN[T any](ctx context.Context, m Model, model string, msgs []Message, seed int64, attempts int, u *Usage, parse func(string) (T, error)) (T, error) {
	return AskAgain(ctx, m, model, msgs, seed, attempts, u, parse, "Answer again with the JSON object only.")
}

// AskAgain is AskN whose retry message ends with again (what to answer).
func AskAgain[T any](ctx context.Context, m Model, model string, msgs []Message, seed int64, attempts int, u *Usage, parse func(string) (T, error), again string) (T, error) {
	var zero T
	var last error
	for i := 0; i < max(1, attempts); i++ {
		rep, err := m.Chat(ctx, model, msgs, seed+int64(i))
		u.Attempts++
		if err != nil {
			last = fmt.Errorf("model call: %w", err)
			u.Errors = append(u.Errors, last.Error())
			if ctx.Err() != nil {
				return zero, ctx.Err()
			}
			continue
		}
		u.PromptTokens += rep.PromptTokens
		u.CompletionTokens += rep.CompletionTokens
		u.ModelTime += rep.ModelTime
		v, err := parse(rep.Content)
		if err == nil {
			return v, nil
		}
		last = err
		u.Errors = append(u.Errors, err.Error())
		msgs = append(msgs, Message{Role: "assistant", Content: rep.Content},
			Message{Role: "user", Content: "Your reply could not be used: " + err.Error() + ". " + again})
	}
	return zero, last
}
