package model_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/mass-dev/mass/agents/model"
	_ "github.com/mass-dev/mass/agents/model/providers"
)

func intp(v int) *int { return &v }

// TestMaxTokensForRoles: the reference's per-role budgets by default, a
// set max_tokens for every role, a role's own budget above both.
func TestMaxTokensForRoles(t *testing.T) {
	for _, c := range []struct {
		cfg                 model.Config
		agent, optim, judge int
	}{
		{model.Config{}, 32768, 49152, 49152},
		{model.Config{MaxTokens: intp(1000)}, 1000, 1000, 1000},
		{model.Config{MaxTokens: intp(1000), Budget: &model.Budget{JudgeMaxTokens: intp(7)}}, 1000, 1000, 7},
	} {
		if a, o, j := c.cfg.MaxTokensFor(model.RoleAgent), c.cfg.MaxTokensFor(model.RoleOptimizer), c.cfg.MaxTokensFor(model.RoleJudge); a != c.agent || o != c.optim || j != c.judge {
			t.Errorf("%+v: agent %d optimizer %d judge %d, want %d %d %d", c.cfg, a, o, j, c.agent, c.optim, c.judge)
		}
	}
	if err := (model.Config{Name: "m", ContextWindow: 45000}).CheckBudget(); err == nil || !strings.Contains(err.Error(), "optimizer output budget 49152") {
		t.Errorf("a window smaller than the optimizer budget passed: %v", err)
	}
	if err := (model.Config{Name: "m"}).CheckBudget(); err != nil {
		t.Errorf("defaults: %v", err)
	}
}

// TestEstimateTokens counts characters, not bytes, four to a token, rounded up.
func TestEstimateTokens(t *testing.T) {
	msgs := []openai.ChatCompletionMessage{{Role: "user", Content: "héllo"}, {Role: "assistant", Content: "", ToolCalls: []openai.ToolCall{{Function: openai.FunctionCall{Name: "ls", Arguments: "{}"}}}}}
	if got, want := model.EstimateTokens(msgs, nil), (5+2+2+3)/4; got != want {
		t.Errorf("EstimateTokens = %d, want %d", got, want)
	}
}

// TestGuardRefusesBeforeSending: on every provider a request whose
// estimate plus its role's output budget passes the window less the
// margin is refused with ErrContextBudget and never reaches the wire; one
// that fits is sent with its role's max tokens.
func TestGuardRefusesBeforeSending(t *testing.T) {
	var mu sync.Mutex
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b map[string]any
		_ = json.NewDecoder(r.Body).Decode(&b)
		mu.Lock()
		bodies = append(bodies, b)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`))
	}))
	defer srv.Close()
	cfg := model.Config{Name: "small", BaseURL: srv.URL + "/v1", Model: "m", ContextWindow: 20000,
		Budget: &model.Budget{OptimizerMaxTokens: intp(4000), JudgeMaxTokens: intp(9000), ContextSafetyTokens: intp(1000)}, MaxTokens: intp(2000)}
	for _, provider := range []string{model.ProviderOpenAIChat, model.ProviderOpenAIResponses, model.ProviderAnthropic} {
		c := cfg
		c.Provider = provider
		if provider == model.ProviderAnthropic {
			c.BaseURL = srv.URL
		}
		cl, err := model.Open(c, nil)
		if err != nil {
			t.Fatal(err)
		}
		// 40,004 characters are 10,001 tokens: + 9,000 for a judge passes 19,000; + 4,000 for the optimizer fits.
		req := model.Request{Messages: []openai.ChatCompletionMessage{{Role: "user", Content: strings.Repeat("x", 40004)}}}
		mu.Lock()
		before := len(bodies)
		mu.Unlock()
		_, err = cl.Chat(model.WithRole(context.Background(), model.RoleJudge), req)
		if !errors.Is(err, model.ErrContextBudget) || !errors.Is(err, model.ErrEndpoint) || !strings.Contains(err.Error(), "role judge") {
			t.Errorf("%s: judge request: %v, want ErrContextBudget naming the role", provider, err)
		}
		mu.Lock()
		if len(bodies) != before {
			t.Errorf("%s: the refused request was sent", provider)
		}
		mu.Unlock()
		if provider != model.ProviderOpenAIChat {
			continue // the other wires are answered by their own fakes (their packages' tests)
		}
		if _, err := cl.Chat(model.WithRole(context.Background(), model.RoleOptimizer), req); err != nil {
			t.Fatalf("optimizer request: %v", err)
		}
		mu.Lock()
		if got := bodies[len(bodies)-1]["max_tokens"]; got != 4000.0 {
			t.Errorf("optimizer request max_tokens %v, want 4000", got)
		}
		mu.Unlock()
	}
}
