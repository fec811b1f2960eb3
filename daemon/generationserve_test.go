package daemon_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mass-dev/mass/agents/model"
	"github.com/mass-dev/mass/agents/model/fakeopenai"
	"github.com/mass-dev/mass/cycle/generation"
	"github.com/mass-dev/mass/daemon"
	"github.com/mass-dev/mass/daemon/config"
	"github.com/mass-dev/mass/daemon/serving"
)

const vllmServeEnv = "MASS_DAEMON_VLLM_SERVE"

// TestVLLMServeHelper is a serve command that answers as vLLM does with
// --enable-lora and runtime LoRA updating: started on a model folder
// (which must hold config.json) under one served name, it loads adapters
// through /v1/load_lora_adapter (400 for a folder without
// adapter_config.json, 400 "already been loaded" for a name it holds),
// lists the name and the adapters in /v1/models, and answers chat for
// those only (404 otherwise). Every chat request appends "<folder>
// <adapter folder or -> <requested model>" to the log file.
func TestVLLMServeHelper(t *testing.T) {
	if os.Getenv(vllmServeEnv) == "" {
		t.Skip("only run as a serve command")
	}
	var args []string
	for i, a := range os.Args {
		if a == "--" {
			args = os.Args[i+1:]
		}
	}
	folder, name, port, logPath := args[0], args[1], args[2], args[3]
	if _, err := os.Stat(filepath.Join(folder, "config.json")); err != nil {
		os.Exit(3)
	}
	f, err := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		os.Exit(4)
	}
	var mu sync.Mutex
	loras := map[string]string{}
	chat := fakeopenai.New(func(r *fakeopenai.Request) fakeopenai.Reply {
		mu.Lock()
		defer mu.Unlock()
		adapter, ok := loras[r.Model]
		if r.Model == name {
			adapter, ok = "-", true
		}
		if !ok {
			return fakeopenai.Reply{Status: http.StatusNotFound, Error: "The model `" + r.Model + "` does not exist."}
		}
		fmt.Fprintf(f, "%s %s %s\n", folder, adapter, r.Model)
		return fakeopenai.Reply{Content: "ok"}
	}, fakeopenai.WithModelID(name), fakeopenai.WithoutHistory())
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/load_lora_adapter", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Name string `json:"lora_name"`
			Path string `json:"lora_path"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		mu.Lock()
		defer mu.Unlock()
		if _, ok := loras[req.Name]; ok {
			http.Error(w, `{"error":{"message":"The lora adapter '`+req.Name+`' has already been loaded."}}`, http.StatusBadRequest)
			return
		}
		if _, err := os.Stat(filepath.Join(req.Path, "adapter_config.json")); err != nil {
			http.Error(w, `{"error":{"message":"Loading lora failed: No adapter found"}}`, http.StatusBadRequest)
			return
		}
		loras[req.Name] = req.Path
		fmt.Fprintf(w, "Success: LoRA adapter '%s' added successfully.", req.Name)
	})
	mux.Handle("/", chat.Handler())
	srv := &http.Server{Addr: "127.0.0.1:" + port, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	if err := srv.ListenAndServe(); err != nil {
		os.Exit(5)
	}
}

// TestServingGenerationsOnTheirBase registers generations 1..3 under both
// serving modes on the vLLM-like serve command above and calls each
// right after: the calls named gen-g must reach gen-(g−1)'s weights plus
// gen-g's adapter, or gen-g's merged folder — never the base plus the
// adapter of a generation trained on a later model.
func TestServingGenerationsOnTheirBase(t *testing.T) {
	t.Setenv(vllmServeEnv, "1")
	for _, mode := range []string{"lora+command", "command"} {
		t.Run(mode, func(t *testing.T) {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			port := fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
			l.Close()
			logPath := filepath.Join(t.TempDir(), "serve.log")
			base := folder(t, "config.json")
			sv := &model.Serving{Command: []string{os.Args[0], "-test.run=^TestVLLMServeHelper$", "--", "{model}", "{name}", port, logPath}}
			if mode == "lora+command" {
				sv.LoRA = "runtime"
			}
			url := "http://127.0.0.1:" + port + "/v1"
			cfg := config.Default()
			cfg.DataDir = t.TempDir()
			cfg.Models = map[string]*config.Model{"base": {BaseURL: url, Model: "base-model", Weights: base, Serving: sv}}
			b, st := openBuiltins(t, cfg)
			defer st.Close()
			defer b.Close()
			waitHealthy(t, url) // massd serves the base itself, in the background
			merged, adapters := map[int]string{0: base}, map[int]string{}
			want := map[int]string{}
			for g := 1; g <= 3; g++ {
				merged[g], adapters[g] = folder(t, "config.json"), folder(t, "adapter_config.json")
				want[g] = merged[g] + " -"
			}
			if mode == "lora+command" {
				// gen-1 on the base server, gen-2 trained on gen-1's merged
				// weights restarts the server on its own merged folder, and
				// gen-3 (trained on gen-2's) loads onto that server.
				want[1], want[3] = base+" "+adapters[1], merged[2]+" "+adapters[3]
			}
			parent := "base"
			for g := 1; g <= 3; g++ {
				name := fmt.Sprintf("gen-%d", g)
				m := generation.Model{Name: name, G: g, Parent: parent, Weights: merged[g], Adapter: adapters[g]}
				if err := b.RegisterModel(context.Background(), fmt.Sprint("job-", g), m); err != nil {
					t.Fatalf("register %s: %v", name, err)
				}
				chat(t, b, name)
				if got := lastServed(t, logPath); got != want[g]+" "+name {
					t.Errorf("a call named %s reached %q, want %q", name, got, want[g]+" "+name)
				}
				if got := servesIn(b, name); !strings.HasPrefix(got, strings.Fields(want[g])[0]) {
					t.Errorf("model list: %s serves %q, want %q", name, got, want[g])
				}
				parent = name
			}
		})
	}
}

// TestRuntimeLoRARefusesGen2OnBase: with runtime LoRA alone (no serve
// command), generation 2's adapter — trained on gen-1's merged weights —
// is never loaded onto the base server; its serve fails naming the fix.
func TestRuntimeLoRARefusesGen2OnBase(t *testing.T) {
	fake, url := newFakeVLLM(t)
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Models = map[string]*config.Model{"base": {BaseURL: url, Model: "base-model", Serving: &model.Serving{LoRA: "runtime"}}}
	b, st := openBuiltins(t, cfg)
	defer st.Close()
	defer b.Close()
	ctx := context.Background()
	a1, a2 := folder(t, "adapter_config.json"), folder(t, "adapter_config.json")
	if err := b.RegisterModel(ctx, "job-1", generation.Model{Name: "gen-1", G: 1, Parent: "base", Weights: folder(t, "config.json"), Adapter: a1}); err != nil {
		t.Fatal(err)
	}
	err := b.RegisterModel(ctx, "job-2", generation.Model{Name: "gen-2", G: 2, Parent: "gen-1", Weights: folder(t, "config.json"), Adapter: a2})
	if err == nil || !strings.Contains(err.Error(), "serving.command") {
		t.Errorf("gen-2 on a runtime-LoRA base server: %v", err)
	}
	if p, ok := fake.loaded["gen-2"]; ok {
		t.Errorf("gen-2's adapter %s was loaded onto the base server: calls named gen-2 reach base + gen-2's adapter", p)
	}
	if got := servesIn(b, "gen-1"); got != "base + adapter "+a1 {
		t.Errorf("model list: gen-1 serves %q", got)
	}
}

func waitHealthy(t *testing.T, url string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for serving.Health(ctx, url) != nil {
		select {
		case <-ctx.Done():
			t.Fatalf("the base server at %s never answered", url)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func lastServed(t *testing.T, logPath string) string {
	t.Helper()
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

func servesIn(b *daemon.Builtins, name string) string {
	for _, m := range b.ModelList() {
		if m.Name == name {
			return m.Serves
		}
	}
	return ""
}
