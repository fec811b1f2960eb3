package daemon_test

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

	"github.com/sashabaranov/go-openai"

	"github.com/mass-dev/mass/agents/model"
	"github.com/mass-dev/mass/agents/model/fakeopenai"
	"github.com/mass-dev/mass/cycle/generation"
	"github.com/mass-dev/mass/daemon"
	"github.com/mass-dev/mass/daemon/config"
	"github.com/mass-dev/mass/daemon/store"
)

// fakeVLLM is fakeopenai plus vLLM's runtime LoRA endpoint, answering as
// vLLM does: 400 for a folder without adapter_config.json, and chat
// completions only for the base model and loaded adapters.
type fakeVLLM struct {
	mu     sync.Mutex
	loaded map[string]string
	chat   *fakeopenai.Server
}

func newFakeVLLM(t *testing.T) (*fakeVLLM, string) {
	return newFakeVLLMWith(t, func(r *fakeopenai.Request) fakeopenai.Reply {
		return fakeopenai.Reply{Content: "answer of " + r.Model}
	})
}

// newFakeVLLMWith is a fakeVLLM whose base model and adapters answer with policy.
func newFakeVLLMWith(t *testing.T, policy fakeopenai.Policy) (*fakeVLLM, string) {
	f := &fakeVLLM{loaded: map[string]string{}}
	f.chat = fakeopenai.New(func(r *fakeopenai.Request) fakeopenai.Reply {
		f.mu.Lock()
		_, ok := f.loaded[r.Model]
		f.mu.Unlock()
		if !ok && r.Model != "base-model" {
			return fakeopenai.Reply{Status: http.StatusNotFound, Error: "The model " + r.Model + " does not exist."}
		}
		return policy(r)
	}, fakeopenai.WithModelID("base-model"), fakeopenai.WithoutHistory())
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/load_lora_adapter", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Name string `json:"lora_name"`
			Path string `json:"lora_path"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		if _, err := os.Stat(filepath.Join(req.Path, "adapter_config.json")); err != nil {
			http.Error(w, `{"error":{"message":"Loading lora failed: No adapter found"}}`, http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.loaded[req.Name] = req.Path
		f.mu.Unlock()
		fmt.Fprintf(w, "Success: LoRA adapter '%s' added successfully.", req.Name)
	})
	mux.Handle("/", f.chat.Handler())
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return f, srv.URL + "/v1"
}

func folder(t *testing.T, file string) string {
	d := t.TempDir()
	if err := os.WriteFile(filepath.Join(d, file), []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	return d
}

func chat(t *testing.T, b *daemon.Builtins, name string) string {
	t.Helper()
	c, err := b.Models.Client(name)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Chat(context.Background(), model.Request{Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}}})
	if err != nil {
		t.Fatalf("chat with %s: %v", name, err)
	}
	return resp.Message.Content
}

func openBuiltins(t *testing.T, cfg *config.Config) (*daemon.Builtins, *store.Store) {
	t.Helper()
	b, err := daemon.NewBuiltins(cfg, quiet)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), filepath.Join(cfg.DataDir, "massd.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.AttachStore(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	return b, st
}

func TestGenerationServedAsRuntimeLoRA(t *testing.T) {
	fake, url := newFakeVLLM(t)
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Models = map[string]*config.Model{"base": {BaseURL: url, Model: "base-model", Serving: &model.Serving{LoRA: "runtime"}}}
	b, st := openBuiltins(t, cfg)
	adapter := folder(t, "adapter_config.json")
	m := generation.Model{Name: "gen-1", G: 1, Parent: "base", Weights: folder(t, "config.json"), Adapter: adapter}
	if err := b.RegisterModel(context.Background(), "job-1", m); err != nil {
		t.Fatal(err)
	}
	if fake.loaded["gen-1"] != adapter {
		t.Fatalf("vLLM holds %v", fake.loaded)
	}
	if got := chat(t, b, "gen-1"); got != "answer of gen-1" {
		t.Errorf("the next search's call reached %q", got)
	}
	bad := m
	bad.Name, bad.G, bad.Adapter = "gen-2", 2, t.TempDir()
	if err := b.RegisterModel(context.Background(), "job-2", bad); err == nil || !strings.Contains(err.Error(), "No adapter found") {
		t.Errorf("an empty adapter folder was served: %v", err)
	}
	b.Close()
	st.Close()
	// After a restart gen-1 is still registered and served.
	fake.loaded = map[string]string{}
	b, st = openBuiltins(t, cfg)
	defer b.Close()
	defer st.Close()
	if got := chat(t, b, "gen-1"); got != "answer of gen-1" {
		t.Errorf("after restart gen-1 answered %q", got)
	}
	if rows, _ := st.Models(context.Background()); len(rows) < 1 || rows[0].Name != "gen-1" || rows[0].Parent != "base" {
		t.Errorf("store models %+v", rows)
	}
}

const serveHelperEnv = "MASS_DAEMON_SERVE_HELPER"

// TestServeCommandHelper is the fake serve command: an OpenAI server on
// the port that answers as the model it was started with.
func TestServeCommandHelper(t *testing.T) {
	if os.Getenv(serveHelperEnv) == "" {
		t.Skip("only run as a serve command")
	}
	var args []string
	for i, a := range os.Args {
		if a == "--" {
			args = os.Args[i+1:]
		}
	}
	if _, err := os.Stat(filepath.Join(args[0], "config.json")); err != nil {
		os.Exit(3)
	}
	srv := fakeopenai.New(func(r *fakeopenai.Request) fakeopenai.Reply {
		return fakeopenai.Reply{Content: "served " + args[0] + " as " + r.Model}
	}, fakeopenai.WithModelID(args[1]))
	if err := srv.Start("127.0.0.1:" + args[2]); err != nil {
		os.Exit(4)
	}
	select {}
}

func TestGenerationServedByCommand(t *testing.T) {
	t.Setenv(serveHelperEnv, "1")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Models = map[string]*config.Model{"base": {BaseURL: "http://127.0.0.1:" + port + "/v1", Model: "base-model",
		Serving: &model.Serving{Command: []string{os.Args[0], "-test.run=^TestServeCommandHelper$", "--", "{model}", "{name}", port}}}}
	b, st := openBuiltins(t, cfg)
	defer st.Close()
	defer b.Close()
	ctx := context.Background()
	m1, m2 := folder(t, "config.json"), folder(t, "config.json")
	if err := b.RegisterModel(ctx, "job-1", generation.Model{Name: "gen-1", G: 1, Parent: "base", Weights: m1}); err != nil {
		t.Fatal(err)
	}
	if got, want := chat(t, b, "gen-1"), "served "+m1+" as gen-1"; got != want {
		t.Errorf("gen-1: %q, want %q", got, want)
	}
	if err := b.RegisterModel(ctx, "job-2", generation.Model{Name: "gen-2", G: 2, Parent: "gen-1", Weights: m2}); err != nil {
		t.Fatal(err)
	}
	if got, want := chat(t, b, "gen-2"), "served "+m2+" as gen-2"; got != want {
		t.Errorf("after gen-2 the command serves %q, want %q", got, want)
	}
}
