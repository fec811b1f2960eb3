package config

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestLoadPrecedence(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "massd.yaml")
	doc := `socket: /tmp/from-file.sock
data_dir: /tmp/file-data
jobs: {concurrency: 3}
log: {format: json}
models:
  local:
    base_url: http://127.0.0.1:8000/v1
    model: qwen3
    api_key_env: MY_KEY
    temperature: 0.6
    top_k: 20
sandbox: {runtime: runsc, strict: true}
`
	if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	f := NewFlags("massd")
	if err := f.Parse([]string{"--config", file, "--data-dir", "/tmp/flag-data"}); err != nil {
		t.Fatal(err)
	}
	c, err := Load(f, env(map[string]string{"MASS_SOCKET": "/tmp/env.sock", "MASS_DATA_DIR": "/tmp/env-data", "MY_KEY": "sekrit"}))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		got, want any
	}{
		{"socket from env over file", c.Socket, "/tmp/env.sock"},
		{"data dir from flag over env", c.DataDir, "/tmp/flag-data"},
		{"concurrency from file", c.Jobs.Concurrency, 3},
		{"log format from file", c.Log.Format, "json"},
		{"log level default", c.Log.Level, "info"},
		{"runtime", c.Sandbox.Runtime, "runsc"},
		{"image default", c.Sandbox.Image, DefaultSandboxImage},
		{"model timeout default", c.Models["local"].Timeout, DefaultModelTimeout},
		{"top_k", *c.Models["local"].TopK, 20},
		{"top_p unset", c.Models["local"].TopP == nil, true},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, tt.got, tt.want)
		}
	}
	t.Setenv("MY_KEY", "sekrit")
	key, err := c.Models["local"].APIKey()
	if err != nil || key != "sekrit" {
		t.Errorf("APIKey = %q, %v; want sekrit", key, err)
	}
}

func TestValidateNamesField(t *testing.T) {
	tests := []struct {
		name      string
		doc       string
		env       map[string]string
		wantField string
		wantMsg   string
	}{
		{"bad runtime", "sandbox: {runtime: kata}\n", nil, "sandbox.runtime", "runc or runsc"},
		{"tcp without token", "tcp: {listen: 127.0.0.1:7070}\n", nil, "tcp.token_file", "bearer token"},
		{"model url", "models: {m: {base_url: ftp://x, model: q}}\n", nil, "models.m.base_url", "http(s) URL"},
		{"model name", "models: {m: {base_url: http://x/v1}}\n", nil, "models.m.model", "required"},
		{"top_p", "models: {m: {base_url: http://x/v1, model: q, top_p: 1.5}}\n", nil, "models.m.top_p", "(0, 1]"},
		{"serving lora", "models: {m: {base_url: http://x/v1, model: q, serving: {lora: boot}}}\n", nil, "models.m.serving.lora", "runtime"},
		{"serving empty", "models: {m: {base_url: http://x/v1, model: q, serving: {}}}\n", nil, "models.m.serving", "is empty"},
		{"provider", "models: {m: {base_url: http://x/v1, model: q, provider: gemini}}\n", nil, "models.m.provider", "openai-chat, openai-responses or anthropic"},
		{"effort", "models: {m: {base_url: https://api.anthropic.com, model: q, provider: anthropic, reasoning_effort: minimal}}\n", nil, "models.m.provider", "low, medium, high, xhigh, max"},
		{"anthropic root", "models: {m: {base_url: https://api.anthropic.com/v1, model: q, provider: anthropic}}\n", nil, "models.m.provider", "API root"},
		{"responses v1", "models: {m: {base_url: https://api.openai.com, model: q, provider: openai-responses}}\n", nil, "models.m.provider", "ending in /v1"},
		{"budget", "models: {m: {base_url: http://x/v1, model: q, context_window: 40000}}\n", nil, "models.m.budget", "leaves no room"},
		{"price entry", "prices: {gpt: {input_per_mtok: 5, output_per_mtok: 30}}\n", nil, "prices.gpt", "names no entry"},
		{"price sign", "models: {m: {base_url: http://x/v1, model: q}}\nprices: {m: {input_per_mtok: -5}}\n", nil, "prices.m", "≥ 0"},
		{"vllm url", "models: {m: {base_url: http://x/v1, model: q, serving: {vllm: {tool_call_parser: qwen3_coder}}}}\n", nil, "models.m.serving.vllm", "explicit port"},
		{"vllm rank", "models: {m: {base_url: http://127.0.0.1:8000/v1, model: q, serving: {vllm: {max_lora_rank: 64}}}}\n", nil, "models.m.serving.vllm", "enable_lora"},
		{"vllm and command", "models: {m: {base_url: http://127.0.0.1:8000/v1, model: q, serving: {vllm: {}, command: [vllm]}}}\n", nil, "models.m.serving", "set one of command or vllm"},
		{"relative socket", "socket: rel.sock\n", nil, "socket", "absolute"},
		{"concurrency", "jobs: {concurrency: 0}\n", nil, "jobs.concurrency", "between 1"},
		{"log level", "log: {level: loud}\n", nil, "log.level", "debug, info"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Default()
			c.Socket, c.DataDir = "/tmp/x.sock", "/tmp/x"
			if err := c.Parse([]byte(tt.doc)); err != nil {
				t.Fatal(err)
			}
			err := c.Validate()
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Validate = %v, want a FieldError", err)
			}
			if got, want := fe.Field, tt.wantField; got != want {
				t.Errorf("field = %q, want %q (%v)", got, want, err)
			}
			if !strings.Contains(fe.Msg, tt.wantMsg) {
				t.Errorf("msg = %q, want it to contain %q", fe.Msg, tt.wantMsg)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ name, doc, want string }{
		{"unknown field", "sockett: /x\n", "field sockett not found"},
		{"typo in a model", "models: {m: {base_url: http://x/v1, model: q, max_concurency: 2}}\n",
			"field max_concurency not found in type model.Config (known keys: api_key_env, api_key_file, background, backoff, base_url, budget, context_window, enable_thinking, max_concurrency, max_response_bytes, max_retries, max_tokens, model, poll_interval, provider, reasoning_effort, seed, serving, stream, temperature, timeout, tokenizer, top_k, top_p, weights)"},
		{"typo in a section", "sandbox: {imag: x}\n", "field imag not found in type config.Sandbox (known keys: backend, gpu_lib_dirs, helper, image, kubernetes, max_gpus, runtime, strict, test_image)"},
		{"wrong type", "jobs: {concurrency: many}\n", "line 1"},
	}
	for _, tt := range tests {
		err := Default().Parse([]byte(tt.doc))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Parse = %v, want error containing %q", tt.name, err, tt.want)
		}
	}
	err := Default().ApplyEnv(env(map[string]string{"MASS_JOBS_CONCURRENCY": "lots"}))
	if err == nil || !strings.Contains(err.Error(), "MASS_JOBS_CONCURRENCY") {
		t.Errorf("ApplyEnv = %v, want it to name MASS_JOBS_CONCURRENCY", err)
	}
}

func TestModelLogValueHidesKey(t *testing.T) {
	t.Setenv("MASS_TEST_KEY", "sekrit")
	m := &Model{BaseURL: "http://x", Model: "q", APIKeyEnv: "MASS_TEST_KEY"}
	if key, err := m.APIKey(); err != nil || key != "sekrit" {
		t.Fatalf("APIKey = %q, %v; want sekrit", key, err)
	}
	var buf strings.Builder
	slog.New(slog.NewTextHandler(&buf, nil)).Info("model", "m", m)
	if s := buf.String(); strings.Contains(s, "sekrit") || !strings.Contains(s, "MASS_TEST_KEY") {
		t.Errorf("log line %q leaks the key or omits its source", s)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("socket: /tmp/s\njobs: {concurrency: 2}\n"))
	f.Add([]byte("models: {m: {base_url: http://x/v1, model: q, top_p: 0.9, timeout: 5m}}\n"))
	f.Add([]byte("sandbox: {runtime: runsc}\ntcp: {listen: ':1'}\n"))
	f.Add([]byte("a: &x [*x, *x]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c := Default()
		c.Socket, c.DataDir = "/tmp/x.sock", "/tmp/x"
		if err := c.Parse(data); err != nil {
			return
		}
		if err := c.Validate(); err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Validate error %v has no FieldError", err)
			}
		}
	})
}

func TestExampleConfig(t *testing.T) {
	c := Default()
	if err := c.LoadFile("massd.example.yaml"); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("example config does not validate: %v", err)
	}
	if got, want := *c.Models["local"].MaxTokens, 32768; got != want {
		t.Errorf("max_tokens = %d, want %d", got, want)
	}
}

// Every key massd.yaml accepts appears in massd.example.yaml, so the
// example documents every knob.
func TestExampleConfigNamesEveryKey(t *testing.T) {
	b, err := os.ReadFile("massd.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for typ, keys := range yamlKeys() {
		for _, k := range keys {
			if !strings.Contains(string(b), k+":") {
				t.Errorf("massd.example.yaml does not show %s (a key of %s)", k, typ)
			}
		}
	}
}

func TestRetentionKeepFor(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{{"", 0, true}, {"30d", 30 * 24 * time.Hour, true}, {"72h", 72 * time.Hour, true}, {"0d", 0, false},
		{"30 days", 0, false}, {"10s", 0, false}, {"-1h", 0, false}} {
		got, err := Retention{KeepWorkspaces: tc.in}.KeepFor()
		if got != tc.want || (err == nil) != tc.ok {
			t.Errorf("KeepFor(%q) = %v, %v; want %v, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
	c := Default()
	c.Retention = Retention{KeepWorkspaces: "thirty", KeepLast: -1}
	err := c.Validate()
	if err == nil || !strings.Contains(err.Error(), "retention.keep_workspaces") || !strings.Contains(err.Error(), "retention.keep_last") {
		t.Errorf("Validate = %v, want both retention fields named", err)
	}
}
