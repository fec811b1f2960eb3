package model_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/mass-dev/mass/agents/model"
	"github.com/mass-dev/mass/agents/model/fakeopenai"
)

func start(t *testing.T, p fakeopenai.Policy) *fakeopenai.Server {
	t.Helper()
	s := fakeopenai.New(p)
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func newClient(t *testing.T, s *fakeopenai.Server, mod func(*model.Config)) *model.OpenAI {
	t.Helper()
	cfg := model.Config{Name: "test", BaseURL: s.URL(), Model: "fake-model", Backoff: time.Millisecond, Timeout: 2 * time.Second}
	if mod != nil {
		mod(&cfg)
	}
	c, err := model.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var convo = model.Request{Messages: []openai.ChatCompletionMessage{
	{Role: "system", Content: "sys"},
	{Role: "user", Content: "write a file"},
}}

func reply(*fakeopenai.Request) fakeopenai.Reply {
	return fakeopenai.Reply{Reasoning: "think ü", Content: "on it",
		Calls: []fakeopenai.Call{{Name: "write_file", Arguments: `{"file_path": "/workspace/a.py", "content": "print(1)\n"}`}}}
}

func TestChatWire(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "json", true: "sse"}[stream], func(t *testing.T) {
			s := start(t, reply)
			t.Setenv("MASS_TEST_KEY", "sk-secret-123")
			c := newClient(t, s, func(c *model.Config) { c.Stream = stream; c.APIKeyEnv = "MASS_TEST_KEY" })
			resp, err := c.Chat(context.Background(), convo)
			if err != nil {
				t.Fatal(err)
			}
			m := resp.Message
			if got, want := m.Content, "on it"; got != want {
				t.Errorf("content = %q, want %q", got, want)
			}
			if got, want := m.ReasoningContent, "think ü"; got != want {
				t.Errorf("reasoning = %q, want %q", got, want)
			}
			if len(m.ToolCalls) != 1 {
				t.Fatalf("tool calls = %d, want 1", len(m.ToolCalls))
			}
			if got, want := m.ToolCalls[0].Function.Arguments, `{"file_path": "/workspace/a.py", "content": "print(1)\n"}`; got != want {
				t.Errorf("arguments = %q, want %q", got, want)
			}
			if got, want := resp.FinishReason, "tool_calls"; got != want {
				t.Errorf("finish = %q, want %q", got, want)
			}
			if resp.Usage.TotalTokens == 0 {
				t.Error("usage missing")
			}
			reqs := s.Requests()
			if len(reqs) != 1 {
				t.Fatalf("server saw %d requests, want 1", len(reqs))
			}
			r := reqs[0]
			var body struct {
				TopK        *int           `json:"top_k"`
				Temperature float64        `json:"temperature"`
				TopP        float64        `json:"top_p"`
				MaxTokens   int            `json:"max_tokens"`
				Kwargs      map[string]any `json:"chat_template_kwargs"`
			}
			if err := json.Unmarshal(r.Raw, &body); err != nil {
				t.Fatal(err)
			}
			if body.TopK == nil || *body.TopK != model.DefaultTopK {
				t.Errorf("top_k = %v, want %d", body.TopK, model.DefaultTopK)
			}
			if got, want := float32(body.Temperature), float32(model.DefaultTemperature); got != want {
				t.Errorf("temperature = %v, want %v", got, want)
			}
			if got, want := body.MaxTokens, model.DefaultMaxTokens; got != want {
				t.Errorf("max_tokens = %d, want %d", got, want)
			}
			if got, want := body.Kwargs["enable_thinking"], true; got != want {
				t.Errorf("enable_thinking = %v, want %v", got, want)
			}
			if got, want := r.Header["Authorization"], "Bearer sk-secret-123"; got != want {
				t.Errorf("authorization = %q, want %q", got, want)
			}
			if got, want := r.Messages[1].Content, "write a file"; got != want {
				t.Errorf("server got user message %q, want %q", got, want)
			}
		})
	}
}

func TestRetries(t *testing.T) {
	tests := []struct {
		name      string
		failures  []fakeopenai.Reply // answered before a good reply
		retries   int
		wantErr   bool
		wantTries int
	}{
		{"500 twice", []fakeopenai.Reply{{Status: 500}, {Status: 502}}, 3, false, 3},
		{"429", []fakeopenai.Reply{{Status: 429, Error: "rate limited"}}, 3, false, 2},
		{"timeout", []fakeopenai.Reply{{Delay: 3 * time.Second}}, 3, false, 2},
		{"hangup", []fakeopenai.Reply{{Hangup: true}}, 3, false, 2},
		{"400 not retried", []fakeopenai.Reply{{Status: 400, Error: "bad request"}}, 3, true, 1},
		{"401 not retried", []fakeopenai.Reply{{Status: 401, Error: "no key"}}, 3, true, 1},
		{"exhausted", []fakeopenai.Reply{{Status: 503}, {Status: 503}, {Status: 503}}, 2, true, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var n atomic.Int64
			s := start(t, func(r *fakeopenai.Request) fakeopenai.Reply {
				i := int(n.Add(1)) - 1
				if i < len(tt.failures) {
					return tt.failures[i]
				}
				return fakeopenai.Reply{Content: "fine"}
			})
			t.Setenv("MASS_TEST_KEY", "sk-never-show")
			c := newClient(t, s, func(c *model.Config) {
				c.MaxRetries, c.Timeout, c.APIKeyEnv = tt.retries, 500*time.Millisecond, "MASS_TEST_KEY"
			})
			resp, err := c.Chat(context.Background(), convo)
			if tt.wantErr {
				if !errors.Is(err, model.ErrEndpoint) {
					t.Fatalf("err = %v, want ErrEndpoint", err)
				}
				if strings.Contains(err.Error(), "sk-never-show") {
					t.Errorf("error leaks the API key: %v", err)
				}
			} else if err != nil {
				t.Fatal(err)
			} else if got, want := resp.Message.Content, "fine"; got != want {
				t.Errorf("content = %q, want %q", got, want)
			}
			if got, want := int(n.Load()), tt.wantTries; got != want {
				t.Errorf("server saw %d attempts, want %d", got, want)
			}
			if got, want := resp.Attempts, tt.wantTries; got != want {
				t.Errorf("Attempts = %d, want %d", got, want)
			}
		})
	}
}

func TestConcurrencyLimit(t *testing.T) {
	var in, peak atomic.Int64
	s := start(t, func(r *fakeopenai.Request) fakeopenai.Reply {
		v := in.Add(1)
		for {
			p := peak.Load()
			if v <= p || peak.CompareAndSwap(p, v) {
				break
			}
		}
		time.Sleep(30 * time.Millisecond)
		in.Add(-1)
		return fakeopenai.Reply{Content: "x"}
	})
	c := newClient(t, s, func(c *model.Config) { c.MaxConcurrency = 2 })
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.Chat(context.Background(), convo); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if got, want := peak.Load(), int64(2); got > want {
		t.Errorf("peak concurrency = %d, want at most %d", got, want)
	}
}

func TestCancelDuringBackoff(t *testing.T) {
	s := start(t, func(r *fakeopenai.Request) fakeopenai.Reply { return fakeopenai.Reply{Status: 500} })
	c := newClient(t, s, func(c *model.Config) { c.Backoff = time.Hour })
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := c.Chat(ctx, convo); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want context deadline", err)
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  model.Config
		want string
	}{
		{"no name", model.Config{BaseURL: "http://x/v1", Model: "m"}, "name is empty"},
		{"bad url", model.Config{Name: "a", BaseURL: "localhost:8000", Model: "m"}, "must be an http(s) URL"},
		{"no model", model.Config{Name: "a", BaseURL: "http://x/v1"}, "model (the id"},
		{"negative", model.Config{Name: "a", BaseURL: "http://x/v1", Model: "m", MaxRetries: -1}, "must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate = %v, want error containing %q", err, tt.want)
			}
		})
	}
}

// TestStreamBadToolIndex: a streamed tool-call index out of range is an
// endpoint error, not a panic or a huge allocation.
func TestStreamBadToolIndex(t *testing.T) {
	for _, idx := range []int{-1, 1 << 30} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":%d,\"id\":\"x\",\"type\":\"function\",\"function\":{\"name\":\"ls\",\"arguments\":\"{}\"}}]}}]}\n\n", idx)
			fmt.Fprint(w, "data: [DONE]\n\n")
		}))
		c, err := model.New(model.Config{Name: "test", BaseURL: srv.URL + "/v1", Model: "m", Stream: true, MaxRetries: 1, Backoff: time.Millisecond}, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Chat(context.Background(), convo)
		srv.Close()
		if !errors.Is(err, model.ErrEndpoint) || !strings.Contains(err.Error(), "tool call index") {
			t.Errorf("index %d: err = %v, want an ErrEndpoint about the tool call index", idx, err)
		}
	}
}
