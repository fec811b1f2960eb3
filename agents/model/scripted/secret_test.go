package scripted

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/mass-dev/mass/agents/model"
)

// TestEndpointNeedsSecret: massd's scripted model listens on a loopback
// port every local user can reach; a request without the per-massd secret
// (or with another) gets 401, massd's own client gets its answer.
func TestEndpointNeedsSecret(t *testing.T) {
	s, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	body := `{"model":"` + ModelID + `","messages":[{"role":"user","content":"task"}]}`
	for _, auth := range []string{"", "Bearer ", "Bearer wrong-key", "Basic eDp4"} {
		for _, p := range []string{"/chat/completions", "/models"} {
			method, rd := http.MethodPost, io.Reader(strings.NewReader(body))
			if p == "/models" {
				method, rd = http.MethodGet, nil
			}
			req, _ := http.NewRequest(method, s.URL()+p, rd)
			req.Header.Set("Content-Type", "application/json")
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized || strings.Contains(string(b), "choices") {
				t.Errorf("%s %s with Authorization %q: %d %s", method, p, auth, resp.StatusCode, b)
			}
		}
	}
	c, err := model.New(s.Config(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Chat(context.Background(), model.Request{Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "task"}}}); err != nil {
		t.Errorf("massd's own client: %v", err)
	}
}
