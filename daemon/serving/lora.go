package serving

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// maxReply caps how much of a server's reply is read.
const maxReply = 64 << 10

// LoRA loads adapters into a running vLLM (its /v1/load_lora_adapter).
type LoRA struct {
	BaseURL string // the server's OpenAI base, e.g. http://127.0.0.1:8000/v1
	Client  *http.Client
}

// AdapterName is the name generation g is served under.
func AdapterName(g int) string { return fmt.Sprintf("gen-%d", g) }

// Load asks the server to load the adapter folder path under name. An
// adapter the server already holds under that name counts as loaded, so
// a generation resumed after a crash can load it again.
func (l LoRA) Load(ctx context.Context, name, path string) error {
	body, _ := json.Marshal(map[string]string{"lora_name": name, "lora_path": path})
	url := strings.TrimSuffix(strings.TrimSuffix(l.BaseURL, "/"), "/v1") + "/v1/load_lora_adapter"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("load adapter %s: %w", name, err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := l.client().Do(req)
	if err != nil {
		return fmt.Errorf("load adapter %s: %w", name, err)
	}
	defer resp.Body.Close()
	reply, _ := io.ReadAll(io.LimitReader(resp.Body, maxReply))
	switch {
	case resp.StatusCode/100 == 2:
		return nil
	case resp.StatusCode == http.StatusBadRequest && strings.Contains(string(reply), "already been loaded"):
		return nil
	}
	return fmt.Errorf("load adapter %s from %s: %s: %s", name, path, resp.Status, strings.TrimSpace(string(reply)))
}

func (l LoRA) client() *http.Client {
	if l.Client != nil {
		return l.Client
	}
	return &http.Client{Timeout: 5 * time.Minute}
}
