package model

import (
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"time"
)

// Config is one OpenAI-compatible model endpoint. It is the one model
// configuration of mass: an entry of massd.yaml's `models` section (keyed by
// its name; daemon/config.Model is this type) and what code passes to New.
// A zero knob means its default (WithDefaults lists them, one per knob).
// The API key is read from APIKeyEnv or APIKeyFile at client construction
// and never stored in Config, logged or recorded; only an in-process
// secret (WithKey: the scripted model's per-massd key) rides in an
// unexported field that no encoding carries.
type Config struct {
	// Name is the key of the entry in massd.yaml, not a field of it.
	Name string `json:"name" yaml:"-"`
	// Provider is the wire protocol: ProviderOpenAIChat (the default),
	// ProviderOpenAIResponses or ProviderAnthropic (provider.go).
	Provider string `json:"provider,omitempty" yaml:"provider"`
	// ReasoningEffort is sent as the Responses API's reasoning.effort or
	// the Messages API's output_config.effort (with adaptive thinking on).
	ReasoningEffort string `json:"reasoning_effort,omitempty" yaml:"reasoning_effort"`
	// Background runs a Responses API request in background mode
	// (store: true), polled with GET /responses/{id} every PollInterval.
	Background   bool          `json:"background,omitempty" yaml:"background"`
	PollInterval time.Duration `json:"poll_interval,omitempty" yaml:"poll_interval"`
	BaseURL      string        `json:"base_url" yaml:"base_url"`
	Model        string        `json:"model" yaml:"model"` // the model id the endpoint serves
	APIKeyEnv    string        `json:"api_key_env,omitempty" yaml:"api_key_env"`
	APIKeyFile   string        `json:"api_key_file,omitempty" yaml:"api_key_file"`
	// MaxConcurrency bounds requests in flight; 0 means DefaultConcurrency.
	MaxConcurrency int `json:"max_concurrency,omitempty" yaml:"max_concurrency"`
	// Timeout bounds one HTTP attempt; 0 means DefaultTimeout.
	Timeout time.Duration `json:"timeout,omitempty" yaml:"timeout"`
	// Sampling; nil means the default (DefaultTemperature, ...).
	Temperature *float64 `json:"temperature,omitempty" yaml:"temperature"`
	TopP        *float64 `json:"top_p,omitempty" yaml:"top_p"`
	TopK        *int     `json:"top_k,omitempty" yaml:"top_k"`
	MaxTokens   *int     `json:"max_tokens,omitempty" yaml:"max_tokens"`
	Seed        *int     `json:"seed,omitempty" yaml:"seed"`
	// EnableThinking is sent as chat_template_kwargs.enable_thinking; nil means true.
	EnableThinking *bool `json:"enable_thinking,omitempty" yaml:"enable_thinking"`
	// Stream asks for server-sent events; the client assembles the deltas.
	Stream bool `json:"stream,omitempty" yaml:"stream"`
	// MaxRetries bounds retries of transient failures; 0 means DefaultMaxRetries.
	MaxRetries int `json:"max_retries,omitempty" yaml:"max_retries"`
	// Backoff is the first retry delay, doubled per retry up to 30s; 0 means DefaultBackoff.
	Backoff time.Duration `json:"backoff,omitempty" yaml:"backoff"`
	// ContextWindow is the model's context length in tokens, for history
	// compression; 0 means DefaultContextWindow.
	ContextWindow int `json:"context_window,omitempty" yaml:"context_window"`
	// Budget holds the optimizer's and judge's output budgets and the
	// context safety margin (budget.go); nil means the defaults.
	Budget *Budget `json:"budget,omitempty" yaml:"budget"`
	// MaxResponseBytes caps one reply's HTTP body; 0 means MaxResponseBytes.
	MaxResponseBytes int64 `json:"max_response_bytes,omitempty" yaml:"max_response_bytes"`
	// DryRun marks the built-in scripted model; it is shown wherever the
	// model is named. Not settable in massd.yaml.
	DryRun bool `json:"dry_run,omitempty" yaml:"-"`
	// Weights and Tokenizer are the HF folder and tokenizer file a
	// generation trained from this model starts from.
	Weights   string `json:"weights,omitempty" yaml:"weights"`
	Tokenizer string `json:"tokenizer,omitempty" yaml:"tokenizer"`
	// Serving says how a generation trained from this model is served.
	Serving *Serving `json:"serving,omitempty" yaml:"serving"`

	key string // WithKey's secret, ahead of APIKeyEnv and APIKeyFile
}

// WithKey returns c with an in-process API key, which APIKey returns
// before looking at APIKeyEnv or APIKeyFile. It is never marshaled.
func (c Config) WithKey(key string) Config {
	c.key = key
	return c
}

// Serving is how massd puts a generation trained from a model in service.
type Serving struct {
	// LoRA "runtime": load the adapter into the running vLLM at base_url
	// (started with --enable-lora --max-lora-rank 64 and
	// VLLM_ALLOW_RUNTIME_LORA_UPDATING=True), served as gen-<g>.
	LoRA string `json:"lora,omitempty" yaml:"lora"`
	// Command: massd starts and stops the server itself; "{model}" in the
	// arguments becomes the generation's merged folder and "{name}" its
	// name. It must answer on base_url.
	Command []string `json:"command,omitempty" yaml:"command"`
	// VLLM: massd composes the `vllm serve` command itself from these
	// knobs (daemon/serving.Recipe) and runs it as Command would.
	VLLM *VLLM `json:"vllm,omitempty" yaml:"vllm"`
}

// VLLM is the vLLM serving recipe of a models entry: the paper's serving
// line (--enable-auto-tool-choice --tool-call-parser qwen3_coder
// --reasoning-parser qwen3) is tool_call_parser: qwen3_coder,
// reasoning_parser: qwen3.
type VLLM struct {
	// Model is the folder the base (g = 0) is served from (e.g. the FP8
	// copy); default the entry's weights. Generations are served from
	// their own folders.
	Model string `json:"model,omitempty" yaml:"model"`
	// Executable is the vllm program; default "vllm" on PATH.
	Executable      string  `json:"executable,omitempty" yaml:"executable"`
	ToolCallParser  string  `json:"tool_call_parser,omitempty" yaml:"tool_call_parser"`
	ReasoningParser string  `json:"reasoning_parser,omitempty" yaml:"reasoning_parser"`
	MaxModelLen     int     `json:"max_model_len,omitempty" yaml:"max_model_len"`
	EnableLoRA      bool    `json:"enable_lora,omitempty" yaml:"enable_lora"`
	MaxLoRARank     int     `json:"max_lora_rank,omitempty" yaml:"max_lora_rank"` // default 64 with enable_lora
	TensorParallel  int     `json:"tensor_parallel_size,omitempty" yaml:"tensor_parallel_size"`
	GPUMemory       float64 `json:"gpu_memory_utilization,omitempty" yaml:"gpu_memory_utilization"`
	// GPU is CUDA_VISIBLE_DEVICES for the server ("0" or "0,1").
	GPU string `json:"gpu,omitempty" yaml:"gpu"`
	// ExtraArgs are appended to the composed command line.
	ExtraArgs []string `json:"extra_args,omitempty" yaml:"extra_args"`
	// ReadyTimeout bounds the wait for /v1/models; default 20m.
	ReadyTimeout time.Duration `json:"ready_timeout,omitempty" yaml:"ready_timeout"`
}

// WithDefaults returns c with every zero knob set to its default.
func (c Config) WithDefaults() Config {
	if c.MaxConcurrency == 0 {
		c.MaxConcurrency = DefaultConcurrency
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxRetries == 0 {
		c.MaxRetries = DefaultMaxRetries
	}
	if c.Backoff == 0 {
		c.Backoff = DefaultBackoff
	}
	if c.Provider == "" {
		c.Provider = ProviderOpenAIChat
	}
	if c.PollInterval == 0 {
		c.PollInterval = DefaultPollInterval
	}
	return c
}

// LogValue keeps secrets out of logs: only the key's source is shown.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("provider", c.ProviderName()),
		slog.String("base_url", c.BaseURL),
		slog.String("model", c.Model),
		slog.String("api_key_env", c.APIKeyEnv),
		slog.String("api_key_file", c.APIKeyFile),
	)
}

// Validate reports the first problem with c in words a person can act on.
func (c Config) Validate() error {
	if c.Name == "" {
		return fmt.Errorf("model config: name is empty")
	}
	u, err := url.Parse(c.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("model %s: base_url %q must be an http(s) URL such as http://127.0.0.1:8000/v1", c.Name, c.BaseURL)
	}
	if c.Model == "" {
		return fmt.Errorf("model %s: model (the id the endpoint serves) is empty", c.Name)
	}
	if err := c.CheckProvider(); err != nil {
		return err
	}
	if c.MaxConcurrency < 0 || (c.MaxTokens != nil && *c.MaxTokens < 0) || c.MaxRetries < 0 || c.Timeout < 0 || c.Backoff < 0 || c.MaxResponseBytes < 0 {
		return fmt.Errorf("model %s: max_concurrency, max_tokens, max_retries, timeout, backoff and max_response_bytes must not be negative", c.Name)
	}
	return nil
}

// sampling applies the defaults to the unset fields.
func (c Config) sampling() Sampling {
	s := Sampling{Temperature: DefaultTemperature, TopP: DefaultTopP, TopK: DefaultTopK, MaxTokens: DefaultMaxTokens, Seed: c.Seed}
	if c.Temperature != nil {
		s.Temperature = *c.Temperature
	}
	if c.TopP != nil {
		s.TopP = *c.TopP
	}
	if c.TopK != nil {
		s.TopK = *c.TopK
	}
	if c.MaxTokens != nil && *c.MaxTokens > 0 {
		s.MaxTokens = *c.MaxTokens
	}
	return s
}

func (c Config) thinking() bool { return c.EnableThinking == nil || *c.EnableThinking }

// APIKey reads the key from the environment variable or file; a missing key
// is allowed (local endpoints need none), an unreadable file is not.
func (c Config) APIKey() (string, error) {
	if c.key != "" {
		return c.key, nil
	}
	if c.APIKeyEnv != "" {
		if v := os.Getenv(c.APIKeyEnv); v != "" {
			return v, nil
		}
	}
	if c.APIKeyFile != "" {
		b, err := os.ReadFile(c.APIKeyFile)
		if err != nil {
			return "", fmt.Errorf("model %s: read api_key_file: %w", c.Name, err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	return "", nil
}
