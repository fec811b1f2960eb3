package serving

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mass-dev/mass/agents/model"
)

// paper is the reference's serving line as one recipe.
func paper(dir string) model.VLLM {
	return model.VLLM{Model: dir, ToolCallParser: "qwen3_coder", ReasoningParser: "qwen3", MaxModelLen: 262144,
		EnableLoRA: true, MaxLoRARank: 64, GPU: "0,1", TensorParallel: 2}
}

// TestRecipePaperLine: the paper's serving entry composes vLLM's command
// line with --enable-auto-tool-choice --tool-call-parser qwen3_coder
// --reasoning-parser qwen3, host and port from base_url, the folder and
// served name as placeholders, and CUDA_VISIBLE_DEVICES from gpu.
func TestRecipePaperLine(t *testing.T) {
	r, err := NewRecipe(paper("/models/Qwen3.6-27B-FP8"), "http://127.0.0.1:8001/v1", "/models/Qwen3.6-27B")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"vllm", "serve", ModelPlaceholder, "--served-model-name", NamePlaceholder, "--host", "127.0.0.1", "--port", "8001",
		"--max-model-len", "262144", "--enable-auto-tool-choice", "--tool-call-parser", "qwen3_coder", "--reasoning-parser", "qwen3",
		"--enable-lora", "--max-lora-rank", "64", "--tensor-parallel-size", "2"}
	if !slices.Equal(r.Argv, want) {
		t.Errorf("argv\n%q\nwant\n%q", r.Argv, want)
	}
	if !slices.Equal(r.Env, []string{"CUDA_VISIBLE_DEVICES=0,1"}) || r.Base != "/models/Qwen3.6-27B-FP8" || r.Ready != DefaultVLLMReadyFor {
		t.Errorf("env %q base %q ready %v", r.Env, r.Base, r.Ready)
	}
	r, _ = NewRecipe(model.VLLM{}, "http://localhost:8000/v1", "/w")
	if r.Base != "/w" || r.Argv[0] != "vllm" || slices.Contains(r.Argv, "--enable-lora") {
		t.Errorf("bare recipe %+v", r)
	}
}

func TestCheckVLLMRefuses(t *testing.T) {
	ok := "http://127.0.0.1:8000/v1"
	for name, c := range map[string]struct {
		v   model.VLLM
		url string
	}{
		"no port":          {model.VLLM{}, "http://127.0.0.1/v1"},
		"not /v1":          {model.VLLM{}, "http://127.0.0.1:8000/"},
		"https":            {model.VLLM{}, "https://127.0.0.1:8000/v1"},
		"remote host name": {model.VLLM{}, "http://gpu-box:8000/v1"},
		"relative model":   {model.VLLM{Model: "models/x"}, ok},
		"parser":           {model.VLLM{ToolCallParser: "qwen3 --evil"}, ok},
		"rank without":     {model.VLLM{MaxLoRARank: 64}, ok},
		"memory":           {model.VLLM{GPUMemory: 1.5}, ok},
		"gpu":              {model.VLLM{GPU: "0;rm"}, ok},
		"port in extra":    {model.VLLM{ExtraArgs: []string{"--port=9"}}, ok},
	} {
		if err := CheckVLLM(c.v, c.url); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestRecipeServesWithFakeVLLM runs the composed command with a fake vllm
// on PATH: it starts healthy on the base folder under the entry's name,
// restarts on a generation's folder under the generation's name, writes
// its output to the log file, and comes back by itself after it is killed.
func TestRecipeServesWithFakeVLLM(t *testing.T) {
	fakeVLLMOnPath(t)
	port := freePort(t)
	base, gen := modelDir(t), modelDir(t)
	r, err := NewRecipe(paper(base), "http://127.0.0.1:"+port+"/v1", "")
	if err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(t.TempDir(), "serving", "qwen.log")
	c := &Command{Argv: r.Argv, Env: r.Env, BaseURL: "http://127.0.0.1:" + port + "/v1", Ready: 30 * time.Second,
		Grace: 5 * time.Second, LogFile: logFile, Supervise: true}
	defer c.Close()
	ctx := context.Background()
	if err := c.StartIdle(ctx, r.Base, "qwen3.6-27b"); err != nil {
		t.Fatal(err)
	}
	if got := served(t, c.BaseURL); got != "qwen3.6-27b" || c.ServedName(gen, "gen-1") != "gen-1" {
		t.Fatalf("serving %q, want the entry's model id", got)
	}
	if err := c.Restart(ctx, gen, "gen-1"); err != nil {
		t.Fatal(err)
	}
	if got := served(t, c.BaseURL); got != "gen-1" {
		t.Fatalf("after the generation's restart serving %q", got)
	}
	log, _ := os.ReadFile(logFile)
	for _, w := range []string{"--tool-call-parser qwen3_coder --reasoning-parser qwen3", "CUDA_VISIBLE_DEVICES=0,1", "serve " + gen + " --served-model-name gen-1"} {
		if !strings.Contains(string(log), w) {
			t.Errorf("log does not show %q:\n%s", w, log)
		}
	}
	c.mu.Lock()
	pid := c.cmd.Process.Pid
	c.mu.Unlock()
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for served(t, c.BaseURL) != "gen-1" || c.Serving() != gen {
		if time.Now().After(deadline) {
			t.Fatal("a killed server was not restarted on the generation's folder")
		}
		time.Sleep(100 * time.Millisecond)
	}
	log, _ = os.ReadFile(logFile)
	if n := strings.Count(string(log), "massd starts"); n != 3 {
		t.Errorf("%d starts logged, want 3 (base, generation, restart):\n%s", n, log)
	}
	resp, err := http.Post(c.BaseURL+"/chat/completions", "application/json", strings.NewReader(`{"model":"gen-1","messages":[]}`))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("chat with gen-1: %v", err)
	}
}

// TestRecipeBadFlagIsAClearError: a server that refuses its command line
// exits, the start fails, and the log holds vLLM's usage error.
func TestRecipeBadFlagIsAClearError(t *testing.T) {
	fakeVLLMOnPath(t)
	port := freePort(t)
	v := paper("")
	v.ExtraArgs = []string{"--no-such-flag"}
	r, err := NewRecipe(v, "http://127.0.0.1:"+port+"/v1", "")
	if err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(t.TempDir(), "v.log")
	c := &Command{Argv: r.Argv, Env: r.Env, BaseURL: "http://127.0.0.1:" + port + "/v1", Ready: 30 * time.Second, LogFile: logFile, Supervise: true}
	defer c.Close()
	if err := c.Restart(context.Background(), modelDir(t), "gen-1"); err == nil || !strings.Contains(err.Error(), "exited before") {
		t.Fatalf("start with a bad flag: %v", err)
	}
	if log, _ := os.ReadFile(logFile); !strings.Contains(string(log), "unrecognized arguments: --no-such-flag") {
		t.Errorf("log:\n%s", log)
	}
}
