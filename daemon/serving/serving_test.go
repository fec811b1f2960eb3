package serving

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeVLLM speaks the parts of vLLM's API that serving uses, as vLLM
// answers them: load_lora_adapter (400 for a name already loaded or a
// folder without adapter_config.json), models listing the base and every
// adapter, chat completions refusing an unknown model with 404.
type fakeVLLM struct {
	mu       sync.Mutex
	adapters map[string]string
}

func (f *fakeVLLM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch r.URL.Path {
	case "/v1/load_lora_adapter":
		var req struct {
			Name string `json:"lora_name"`
			Path string `json:"lora_path"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Name == "" || req.Path == "" {
			http.Error(w, `{"error":{"message":"Both 'lora_name' and 'lora_path' must be provided."}}`, http.StatusBadRequest)
			return
		}
		if _, ok := f.adapters[req.Name]; ok {
			http.Error(w, fmt.Sprintf(`{"error":{"message":"The lora adapter '%s' has already been loaded."}}`, req.Name), http.StatusBadRequest)
			return
		}
		if _, err := os.Stat(filepath.Join(req.Path, "adapter_config.json")); err != nil {
			http.Error(w, `{"error":{"message":"Loading lora failed: No adapter found"}}`, http.StatusBadRequest)
			return
		}
		f.adapters[req.Name] = req.Path
		fmt.Fprintf(w, "Success: LoRA adapter '%s' added successfully.", req.Name)
	case "/v1/models":
		data := []map[string]string{{"id": "base", "object": "model"}}
		for n := range f.adapters {
			data = append(data, map[string]string{"id": n, "object": "model", "parent": "base"})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
	case "/v1/chat/completions":
		var req struct {
			Model string `json:"model"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		if _, ok := f.adapters[req.Model]; !ok && req.Model != "base" {
			http.Error(w, fmt.Sprintf(`{"error":{"message":"The model %s does not exist."}}`, req.Model), http.StatusNotFound)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"model": req.Model, "choices": []any{}})
	default:
		http.NotFound(w, r)
	}
}

func TestLoRALoad(t *testing.T) {
	fake := &fakeVLLM{adapters: map[string]string{}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	adapter := t.TempDir()
	if err := os.WriteFile(filepath.Join(adapter, "adapter_config.json"), []byte(`{"r":64}`), 0o600); err != nil {
		t.Fatal(err)
	}
	l := LoRA{BaseURL: srv.URL + "/v1"}
	ctx := context.Background()
	if err := l.Load(ctx, AdapterName(1), adapter); err != nil {
		t.Fatal(err)
	}
	if err := l.Load(ctx, AdapterName(1), adapter); err != nil {
		t.Errorf("loading gen-1 again (a resumed generation): %v", err)
	}
	if fake.adapters["gen-1"] != adapter {
		t.Errorf("adapters %v", fake.adapters)
	}
	err := l.Load(ctx, AdapterName(2), t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "No adapter found") {
		t.Errorf("empty folder loaded: %v", err)
	}
	resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"gen-1"}`))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("chat with gen-1 after the load: %v %v", err, resp.Status)
	}
}

const serveHelperEnv = "MASS_SERVING_HELPER"

// TestServeHelper is the fake serve command: `vllm serve MODEL --port P`
// as far as massd sees it. It loads for a moment, then lists MODEL.
func TestServeHelper(t *testing.T) {
	if os.Getenv(serveHelperEnv) == "" {
		t.Skip("only run as a serve command")
	}
	args := flagArgs()
	if _, err := os.Stat(filepath.Join(args[0], "config.json")); err != nil {
		fmt.Fprintln(os.Stderr, "no model:", err)
		os.Exit(3)
	}
	time.Sleep(300 * time.Millisecond)
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": []map[string]string{{"id": args[0]}}})
	})
	_ = http.ListenAndServe("127.0.0.1:"+args[1], mux)
	os.Exit(0)
}

func flagArgs() []string {
	for i, a := range os.Args {
		if a == "--" {
			return os.Args[i+1:]
		}
	}
	return nil
}

func freePort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
}

func modelDir(t *testing.T) string {
	d := t.TempDir()
	if err := os.WriteFile(filepath.Join(d, "config.json"), []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	return d
}

func served(t *testing.T, base string) string {
	resp, err := http.Get(base + "/models")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var l struct{ Data []struct{ ID string } }
	_ = json.NewDecoder(resp.Body).Decode(&l)
	if len(l.Data) == 0 {
		return ""
	}
	return l.Data[0].ID
}

func TestCommandRestart(t *testing.T) {
	t.Setenv(serveHelperEnv, "1")
	port := freePort(t)
	c := &Command{Argv: []string{os.Args[0], "-test.run=^TestServeHelper$", "--", ModelPlaceholder, port},
		BaseURL: "http://127.0.0.1:" + port + "/v1", Ready: 30 * time.Second, Grace: 5 * time.Second}
	defer c.Stop()
	ctx := context.Background()
	m1, m2 := modelDir(t), modelDir(t)
	if err := c.Restart(ctx, m1, "gen-1"); err != nil {
		t.Fatal(err)
	}
	if got := served(t, c.BaseURL); got != m1 || c.Serving() != m1 {
		t.Fatalf("serving %q, want %s", got, m1)
	}
	if err := c.Restart(ctx, m2, "gen-2"); err != nil {
		t.Fatal(err)
	}
	if got := served(t, c.BaseURL); got != m2 {
		t.Fatalf("after restart serving %q, want the merged folder %s", got, m2)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if got := served(t, c.BaseURL); got != "" {
		t.Errorf("stopped server still answers with %s", got)
	}
	err := c.Restart(ctx, t.TempDir(), "gen-3") // no config.json: the command exits
	if err == nil || !strings.Contains(err.Error(), "exited before") {
		t.Errorf("a serve command that dies: %v", err)
	}
}

// TestCommandStartIdleAndClose: StartIdle leaves a running generation's
// server alone (the base must not replace it), and after Close no start
// leaves a server running.
func TestCommandStartIdleAndClose(t *testing.T) {
	t.Setenv(serveHelperEnv, "1")
	port := freePort(t)
	c := &Command{Argv: []string{os.Args[0], "-test.run=^TestServeHelper$", "--", ModelPlaceholder, port},
		BaseURL: "http://127.0.0.1:" + port + "/v1", Ready: 30 * time.Second, Grace: 5 * time.Second}
	defer c.Stop()
	ctx := context.Background()
	gen, base := modelDir(t), modelDir(t)
	if err := c.Restart(ctx, gen, "gen-1"); err != nil {
		t.Fatal(err)
	}
	if err := c.StartIdle(ctx, base, "base"); err != nil {
		t.Fatal(err)
	}
	if got := served(t, c.BaseURL); got != gen {
		t.Errorf("after StartIdle the server serves %q, want the generation's %s", got, gen)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.StartIdle(ctx, base, "base"); err == nil {
		t.Error("StartIdle after Close started a server")
	}
	if got := served(t, c.BaseURL); got != "" {
		t.Errorf("a closed command still serves %s", got)
	}
}
