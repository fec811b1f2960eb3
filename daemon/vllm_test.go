package daemon_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mass-dev/mass/agents/model"
	"github.com/mass-dev/mass/agents/model/fakeopenai"
	"github.com/mass-dev/mass/cycle/generation"
	"github.com/mass-dev/mass/daemon/config"
)

const vllmHelperEnv = "MASS_DAEMON_FAKE_VLLM"

// TestFakeVLLMCommandHelper is a fake `vllm` (run by a script of that name
// on PATH): it wants `serve DIR --served-model-name NAME --host H --port P`
// and the paper's parser flags, else it exits 2 as vLLM's parser does, and
// serves the OpenAI wire as NAME.
func TestFakeVLLMCommandHelper(t *testing.T) {
	if os.Getenv(vllmHelperEnv) == "" {
		t.Skip("only run as the fake vllm")
	}
	var args []string
	for i, a := range os.Args {
		if a == "--" {
			args = os.Args[i+1:]
			break
		}
	}
	fmt.Println("fake vllm:", strings.Join(args, " "))
	flag := func(name string) string {
		i := slices.Index(args, name)
		if i < 0 || i+1 >= len(args) {
			return ""
		}
		return args[i+1]
	}
	if len(args) < 2 || args[0] != "serve" || flag("--served-model-name") == "" || flag("--port") == "" ||
		!strings.Contains(strings.Join(args, " "), "--enable-auto-tool-choice --tool-call-parser qwen3_coder --reasoning-parser qwen3") {
		fmt.Fprintln(os.Stderr, "vllm serve: error: unexpected command line")
		os.Exit(2)
	}
	if _, err := os.Stat(filepath.Join(args[1], "config.json")); err != nil {
		os.Exit(1)
	}
	srv := fakeopenai.New(func(r *fakeopenai.Request) fakeopenai.Reply {
		return fakeopenai.Reply{Content: "vllm served " + args[1] + " as " + r.Model}
	}, fakeopenai.WithModelID(flag("--served-model-name")))
	if err := srv.Start(flag("--host") + ":" + flag("--port")); err != nil {
		os.Exit(4)
	}
	select {}
}

// TestServedByVLLMRecipe: an entry with serving.vllm has massd start the
// composed `vllm serve` on vllm.model for the base, then on each
// generation's folder, its output in <data_dir>/serving/<entry>.log.
func TestServedByVLLMRecipe(t *testing.T) {
	bin := t.TempDir()
	script := fmt.Sprintf("#!/bin/sh\nexec %q -test.run='^TestFakeVLLMCommandHelper$' -- \"$@\"\n", os.Args[0])
	if err := os.WriteFile(filepath.Join(bin, "vllm"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv(vllmHelperEnv, "1")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	fp8, weights, gen := folder(t, "config.json"), folder(t, "config.json"), folder(t, "config.json")
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Models = map[string]*config.Model{"qwen": {BaseURL: "http://127.0.0.1:" + port + "/v1", Model: "qwen3.6-27b", Weights: weights,
		Serving: &model.Serving{VLLM: &model.VLLM{Model: fp8, ToolCallParser: "qwen3_coder", ReasoningParser: "qwen3",
			MaxModelLen: 262144, EnableLoRA: true, GPU: "0"}}}}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	b, st := openBuiltins(t, cfg)
	defer st.Close()
	defer b.Close()
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(cfg.Models["qwen"].BaseURL + "/models")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("massd did not start vllm for the base")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if got, want := chat(t, b, "qwen"), "vllm served "+fp8+" as qwen3.6-27b"; got != want {
		t.Errorf("base: %q, want %q", got, want)
	}
	if err := b.RegisterModel(context.Background(), "job-1", generation.Model{Name: "gen-1", G: 1, Parent: "qwen", Weights: gen}); err != nil {
		t.Fatal(err)
	}
	if got, want := chat(t, b, "gen-1"), "vllm served "+gen+" as gen-1"; got != want {
		t.Errorf("gen-1: %q, want %q", got, want)
	}
	log, err := os.ReadFile(filepath.Join(cfg.DataDir, "serving", "qwen.log"))
	if err != nil || strings.Count(string(log), "massd starts: vllm serve") != 2 || !strings.Contains(string(log), "--enable-lora --max-lora-rank 64") {
		t.Errorf("serving log (%v):\n%s", err, log)
	}
}
