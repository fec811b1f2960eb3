package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"
)

// Roles a request is made for; each has its own output budget. A context
// without a role (WithRole) is an agent's.
const (
	RoleAgent     = "agent"
	RoleOptimizer = "optimizer"
	RoleJudge     = "judge"
)

// The reference's budgets (SakanaAI/mass, mass/pipeline.py
// inference_options): episode_max_output_tokens 32768 for the agents,
// max_output_tokens 49152 for the optimizer and the self-judge, and
// context_safety_tokens 8192 kept free of the 262144-token window.
const (
	DefaultAgentMaxTokens     = DefaultMaxTokens
	DefaultOptimizerMaxTokens = 49152
	DefaultJudgeMaxTokens     = 49152
	DefaultContextSafety      = 8192
)

// ErrContextBudget is a request refused before it was sent: its estimated
// input plus its role's output budget does not fit the context window less
// the safety margin. It also wraps ErrEndpoint (a model failure).
var ErrContextBudget = errors.New("request cannot fit the context window")

// Budget is a models entry's per-role output budgets and safety margin
// (the agents' budget is max_tokens). A nil field is the default above,
// except that a set max_tokens is every role's default.
type Budget struct {
	OptimizerMaxTokens  *int `json:"optimizer_max_tokens,omitempty" yaml:"optimizer_max_tokens"`
	JudgeMaxTokens      *int `json:"judge_max_tokens,omitempty" yaml:"judge_max_tokens"`
	ContextSafetyTokens *int `json:"context_safety_tokens,omitempty" yaml:"context_safety_tokens"`
}

type roleKey struct{}

// WithRole marks ctx's requests as made for role.
func WithRole(ctx context.Context, role string) context.Context {
	return context.WithValue(ctx, roleKey{}, role)
}

// RoleOf is ctx's role, RoleAgent when none was set.
func RoleOf(ctx context.Context) string {
	if r, ok := ctx.Value(roleKey{}).(string); ok && r != "" {
		return r
	}
	return RoleAgent
}

// MaxTokensFor is the output budget of a request made for role.
func (c Config) MaxTokensFor(role string) int {
	pick := func(v *int, def int) int {
		switch {
		case v != nil && *v > 0:
			return *v
		case c.MaxTokens != nil && *c.MaxTokens > 0:
			return *c.MaxTokens
		}
		return def
	}
	var b Budget
	if c.Budget != nil {
		b = *c.Budget
	}
	switch role {
	case RoleOptimizer:
		return pick(b.OptimizerMaxTokens, DefaultOptimizerMaxTokens)
	case RoleJudge:
		return pick(b.JudgeMaxTokens, DefaultJudgeMaxTokens)
	}
	return pick(nil, DefaultAgentMaxTokens)
}

// Window is the context window and the safety margin kept free of it.
func (c Config) Window() (window, safety int) {
	window, safety = c.ContextWindow, DefaultContextSafety
	if window <= 0 {
		window = DefaultContextWindow
	}
	if c.Budget != nil && c.Budget.ContextSafetyTokens != nil {
		safety = *c.Budget.ContextSafetyTokens
	}
	return window, safety
}

// CheckBudget validates the budgets: each role's output plus the safety
// margin must leave room in the window, as the reference requires.
func (c Config) CheckBudget() error {
	window, safety := c.Window()
	if safety < 0 {
		return fmt.Errorf("model %s: budget.context_safety_tokens %d must not be negative", c.Name, safety)
	}
	for _, role := range []string{RoleAgent, RoleOptimizer, RoleJudge} {
		if out := c.MaxTokensFor(role); out+safety >= window {
			return fmt.Errorf("model %s: the %s output budget %d plus the safety margin %d leaves no room for input in the context window %d",
				c.Name, role, out, safety, window)
		}
	}
	return nil
}

// EstimateTokens is the guard's input estimate: every character (Unicode
// code point) of the messages' contents, reasoning and tool calls and of
// the tool definitions' JSON, four to a token, rounded up; the
// reference's (len(system) + len(user) + 3) // 4 over a whole request.
func EstimateTokens(msgs []openai.ChatCompletionMessage, tools []openai.Tool) int {
	n := 0
	for _, m := range msgs {
		n += utf8.RuneCountInString(m.Content) + utf8.RuneCountInString(m.ReasoningContent)
		for _, p := range m.MultiContent {
			n += utf8.RuneCountInString(p.Text)
		}
		for _, tc := range m.ToolCalls {
			n += utf8.RuneCountInString(tc.Function.Name) + utf8.RuneCountInString(tc.Function.Arguments)
		}
	}
	if len(tools) > 0 {
		b, _ := json.Marshal(tools)
		n += utf8.RuneCount(b)
	}
	return max(1, (n+3)/4)
}

// Guard refuses a request that cannot fit before it is sent, and returns
// the output budget to ask for.
func (c Config) Guard(ctx context.Context, req Request) (int, error) {
	role := RoleOf(ctx)
	out := c.MaxTokensFor(role)
	window, safety := c.Window()
	in := EstimateTokens(req.Messages, req.Tools)
	if allowed := window - safety; in+out > allowed {
		return out, fmt.Errorf("%w: %w: model %s, role %s: estimated input %d tokens (characters / 4) + output budget %d = %d, over the context window %d less the safety margin %d = %d; shorten the input or lower the %s budget",
			ErrEndpoint, ErrContextBudget, c.Name, role, in, out, in+out, window, safety, allowed, role)
	}
	return out, nil
}
