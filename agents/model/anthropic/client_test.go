package anthropic_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/mass-dev/mass/agents/model"
	"github.com/mass-dev/mass/agents/model/anthropic"
	"github.com/mass-dev/mass/agents/model/fakeanthropic"
)

const key = "sk-ant-api03-test-0123456789-secret"

func setup(t *testing.T, effort string) (*fakeanthropic.Server, model.Client, *bytes.Buffer) {
	t.Helper()
	fake := fakeanthropic.New(key, func(r anthropic.Request) string {
		return `{"winner":"B","rationale":"` + r.Messages[len(r.Messages)-1].Content + `"}`
	})
	srv := httptest.NewServer(fake.Handler())
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	kf := dir + "/key"
	if err := os.WriteFile(kf, []byte(key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	mt, temp := 64000, 0.6
	cfg := model.Config{Name: "claude", Provider: model.ProviderAnthropic, BaseURL: srv.URL, Model: "claude-opus-4-8",
		APIKeyFile: kf, ReasoningEffort: effort, MaxTokens: &mt, Temperature: &temp, Backoff: time.Millisecond}
	c, err := model.Open(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	log.Info("model opened", "config", cfg)
	return fake, c, &logs
}

func ask(c model.Client) (model.Response, error) {
	return c.Chat(context.Background(), model.Request{Messages: []openai.ChatCompletionMessage{
		{Role: "system", Content: "You judge."}, {Role: "user", Content: "which?"}}})
}

// TestAnthropicWire: with an effort the request streams with adaptive
// thinking, output_config.effort and no temperature; system messages are
// the system prompt; the streamed thinking and text blocks and the usage
// of message_start and message_delta come back.
func TestAnthropicWire(t *testing.T) {
	fake, c, _ := setup(t, "max")
	r, err := ask(c)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.Message.Content, `{"winner":"B","rationale":"which?"}`; got != want {
		t.Errorf("content %q, want %q", got, want)
	}
	if r.Message.ReasoningContent == "" || r.FinishReason != "stop" {
		t.Errorf("reasoning %q finish %q", r.Message.ReasoningContent, r.FinishReason)
	}
	if r.Usage.PromptTokens == 0 || r.Usage.CompletionTokens < 40 {
		t.Errorf("usage %+v", r.Usage)
	}
	var body map[string]any
	if err := json.Unmarshal(fake.Bodies()[0], &body); err != nil {
		t.Fatal(err)
	}
	if body["stream"] != true || body["system"] != "You judge." || body["max_tokens"] != 64000.0 ||
		body["thinking"].(map[string]any)["type"] != "adaptive" || body["output_config"].(map[string]any)["effort"] != "max" {
		t.Errorf("body %s", fake.Bodies()[0])
	}
	if _, ok := body["temperature"]; ok {
		t.Errorf("temperature sent with thinking on: %s", fake.Bodies()[0])
	}
}

// TestAnthropicNoEffort: without an effort no thinking is asked for and
// the configured temperature is sent.
func TestAnthropicNoEffort(t *testing.T) {
	fake, c, _ := setup(t, "")
	r, err := ask(c)
	if err != nil || r.Message.ReasoningContent != "" {
		t.Fatalf("%+v %v", r, err)
	}
	if b := string(fake.Bodies()[0]); strings.Contains(b, "thinking") || !strings.Contains(b, `"temperature":0.6`) {
		t.Errorf("body %s", b)
	}
}

// TestAnthropicRetries: a 429 with retry-after, a stream cut before
// message_stop and an overloaded error event are retried with the very
// same body bytes.
func TestAnthropicRetries(t *testing.T) {
	fake, c, _ := setup(t, "max")
	fake.Fail(fakeanthropic.FaultRateLimit, fakeanthropic.FaultTruncate, fakeanthropic.FaultOverloaded)
	r, err := ask(c)
	if err != nil {
		t.Fatal(err)
	}
	bodies := fake.Bodies()
	if r.Attempts != 4 || len(bodies) != 4 {
		t.Fatalf("attempts %d, bodies %d; want 4", r.Attempts, len(bodies))
	}
	for i, b := range bodies[1:] {
		if !bytes.Equal(b, bodies[0]) {
			t.Errorf("retry %d sent another body", i+1)
		}
	}
}

// TestAnthropicTruncatedGivesUp: a stream that is always cut short ends
// in an error after max_retries, never in a partial reply.
func TestAnthropicTruncatedGivesUp(t *testing.T) {
	fake, c, _ := setup(t, "")
	fake.Fail(slices.Repeat([]string{fakeanthropic.FaultTruncate}, model.DefaultMaxRetries+1)...)
	_, err := ask(c)
	if !errors.Is(err, model.ErrTruncatedStream) || !errors.Is(err, model.ErrEndpoint) {
		t.Fatalf("err %v", err)
	}
}

// TestAnthropicBadKey: a refused key is ErrAuth at once, named by provider
// and key source, with the API's error type; the key is nowhere.
func TestAnthropicBadKey(t *testing.T) {
	fake, c, logs := setup(t, "max")
	fake.SetKey("sk-ant-other")
	_, err := ask(c)
	if !errors.Is(err, model.ErrAuth) {
		t.Fatalf("err %v, want ErrAuth", err)
	}
	for _, w := range []string{"anthropic", "HTTP 401", "authentication_error", "invalid x-api-key", "api_key_file"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
	if len(fake.Bodies()) != 1 {
		t.Errorf("%d attempts, want 1", len(fake.Bodies()))
	}
	if strings.Contains(err.Error()+logs.String(), key) {
		t.Errorf("the key leaked")
	}
}

func TestAnthropicConfigRefused(t *testing.T) {
	for name, cfg := range map[string]model.Config{
		"/v1 base":   {Name: "c", Provider: model.ProviderAnthropic, BaseURL: "https://api.anthropic.com/v1", Model: "m"},
		"bad effort": {Name: "c", Provider: model.ProviderAnthropic, BaseURL: "https://api.anthropic.com", Model: "m", ReasoningEffort: "minimal"},
		"background": {Name: "c", Provider: model.ProviderAnthropic, BaseURL: "https://api.anthropic.com", Model: "m", Background: true},
	} {
		if _, err := model.Open(cfg, nil); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestAnthropicRefusesWhatItCannotSay: tools, tool messages and a
// conversation that does not start with the user are refused unsent.
func TestAnthropicRefusesWhatItCannotSay(t *testing.T) {
	fake, c, _ := setup(t, "max")
	for name, req := range map[string]model.Request{
		"tools":       {Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "x"}}, Tools: []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "ls"}}}},
		"tool role":   {Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "x"}, {Role: "tool", Content: "y"}}},
		"system only": {Messages: []openai.ChatCompletionMessage{{Role: "system", Content: "x"}}},
	} {
		if _, err := c.Chat(context.Background(), req); err == nil || !strings.Contains(err.Error(), "anthropic") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if n := len(fake.Bodies()); n != 0 {
		t.Errorf("%d refused requests were sent", n)
	}
}
