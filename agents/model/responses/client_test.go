package responses_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/mass-dev/mass/agents/model"
	"github.com/mass-dev/mass/agents/model/fakeresponses"
	"github.com/mass-dev/mass/agents/model/responses"
)

const key = "sk-test-0123456789abcdef-secret"

func setup(t *testing.T, background bool, tweak ...func(*model.Config)) (*fakeresponses.Server, *responses.Client, *bytes.Buffer) {
	t.Helper()
	fake := fakeresponses.New(key, func(r responses.CreateRequest) string {
		return `{"winner":"A","rationale":"` + r.Input[len(r.Input)-1].Content + `"}`
	})
	srv := httptest.NewServer(fake.Handler())
	t.Cleanup(srv.Close)
	t.Setenv("FAKE_OPENAI_KEY", key)
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	mt := 4096
	cfg := model.Config{Name: "gpt", Provider: model.ProviderOpenAIResponses, BaseURL: srv.URL + "/v1", Model: "gpt-5.5",
		APIKeyEnv: "FAKE_OPENAI_KEY", ReasoningEffort: "xhigh", MaxTokens: &mt, Backoff: time.Millisecond,
		Background: background, PollInterval: time.Millisecond}
	for _, f := range tweak {
		f(&cfg)
	}
	c, err := model.Open(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	log.Info("model opened", "config", cfg)
	return fake, c.(*responses.Client), &logs
}

func ask(t *testing.T, c model.Client) (model.Response, error) {
	t.Helper()
	return c.Chat(context.Background(), model.Request{Messages: []openai.ChatCompletionMessage{
		{Role: "system", Content: "You judge."}, {Role: "user", Content: "which?"}}})
}

// TestResponsesWire: the body is the Responses API's (input items,
// reasoning.effort, max_output_tokens, no sampling seed) and the reply's
// output_text and usage come back.
func TestResponsesWire(t *testing.T) {
	fake, c, _ := setup(t, false)
	r, err := ask(t, c)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.Message.Content, `{"winner":"A","rationale":"which?"}`; got != want {
		t.Errorf("content %q, want %q", got, want)
	}
	if r.Usage.PromptTokens == 0 || r.Usage.CompletionTokens < 64 || r.Attempts != 1 {
		t.Errorf("usage %+v attempts %d", r.Usage, r.Attempts)
	}
	var body map[string]any
	if err := json.Unmarshal(fake.Bodies()[0], &body); err != nil {
		t.Fatal(err)
	}
	if body["reasoning"].(map[string]any)["effort"] != "xhigh" || body["max_output_tokens"] != 4096.0 || body["store"] != false {
		t.Errorf("body %s", fake.Bodies()[0])
	}
	for _, k := range []string{"seed", "temperature", "messages", "background"} {
		if _, ok := body[k]; ok {
			t.Errorf("body carries %s: %s", k, fake.Bodies()[0])
		}
	}
}

// TestResponsesRetries: a 429 with retry-after and a body cut off in
// transit are retried, each retry with the very same bytes.
func TestResponsesRetries(t *testing.T) {
	fake, c, _ := setup(t, false)
	fake.Fail(fakeresponses.FaultRateLimit, fakeresponses.FaultTruncate, fakeresponses.FaultServer)
	r, err := ask(t, c)
	if err != nil {
		t.Fatal(err)
	}
	bodies := fake.Bodies()
	if r.Attempts != 4 || len(bodies) != 4 {
		t.Fatalf("attempts %d, bodies %d; want 4", r.Attempts, len(bodies))
	}
	for i, b := range bodies[1:] {
		if !bytes.Equal(b, bodies[0]) {
			t.Errorf("retry %d sent another body:\n%s\n%s", i+1, b, bodies[0])
		}
	}
}

// TestResponsesBackground: background mode stores the response and polls
// GET /responses/{id} until it is completed.
func TestResponsesBackground(t *testing.T) {
	fake, c, _ := setup(t, true)
	r, err := ask(t, c)
	if err != nil || !strings.Contains(r.Message.Content, "winner") {
		t.Fatalf("%+v %v", r, err)
	}
	var body responses.CreateRequest
	if err := json.Unmarshal(fake.Bodies()[0], &body); err != nil || !body.Background || !body.Store {
		t.Errorf("body %s", fake.Bodies()[0])
	}
}

// TestResponsesBadKey: a refused key is ErrAuth at once (no retry), named
// by provider and key source; the key is in no error and no log line.
func TestResponsesBadKey(t *testing.T) {
	fake, c, logs := setup(t, false)
	fake.SetKey("sk-the-right-one")
	_, err := ask(t, c)
	if !errors.Is(err, model.ErrAuth) || !errors.Is(err, model.ErrEndpoint) {
		t.Fatalf("err %v, want ErrAuth", err)
	}
	for _, w := range []string{"openai-responses", "HTTP 401", "invalid_api_key", "api_key_env FAKE_OPENAI_KEY"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
	if len(fake.Bodies()) != 1 {
		t.Errorf("%d attempts, want 1", len(fake.Bodies()))
	}
	if strings.Contains(err.Error()+logs.String(), key) {
		t.Errorf("the key leaked: %s %s", err, logs)
	}
}

func TestResponsesConfigRefused(t *testing.T) {
	for name, cfg := range map[string]model.Config{
		"no /v1":     {Name: "g", Provider: model.ProviderOpenAIResponses, BaseURL: "https://api.openai.com", Model: "m"},
		"bad effort": {Name: "g", Provider: model.ProviderOpenAIResponses, BaseURL: "https://api.openai.com/v1", Model: "m", ReasoningEffort: "max"},
		"provider":   {Name: "g", Provider: "gemini", BaseURL: "https://x/v1", Model: "m"},
	} {
		if _, err := model.Open(cfg, nil); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestResponsesBackgroundTimeout: a background response still running
// after the timeout is an error, and no second response is created.
func TestResponsesBackgroundTimeout(t *testing.T) {
	fake, c, _ := setup(t, true, func(c *model.Config) { c.Timeout = 50 * time.Millisecond })
	fake.Fail(fakeresponses.FaultStuck)
	_, err := ask(t, c)
	if err == nil || !strings.Contains(err.Error(), "still in_progress") {
		t.Fatalf("err %v", err)
	}
	if n := len(fake.Bodies()); n != 1 {
		t.Errorf("%d responses created, want 1", n)
	}
}
