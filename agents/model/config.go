package model

import (
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"
)

// Config names one model endpoint, mirroring the `models` section of massd's
// configuration. The API key is read from APIKeyEnv or APIKeyFile at client
// construction and never stored in Config, logged or recorded.
type Config struct {
	Name           string        `json:"name" yaml:"name"`
	BaseURL        string        `json:"base_url" yaml:"base_url"`
	Model          string        `json:"model" yaml:"model"`
	APIKeyEnv      string        `json:"api_key_env,omitempty" yaml:"api_key_env,omitempty"`
	APIKeyFile     string        `json:"api_key_file,omitempty" yaml:"api_key_file,omitempty"`
	MaxConcurrency int           `json:"max_concurrency,omitempty" yaml:"max_concurrency,omitempty"`
	Timeout        time.Duration `json:"timeout,omitempty" yaml:"timeout,omitempty"`
	Temperature    *float64      `json:"temperature,omitempty" yaml:"temperature,omitempty"`
	TopP           *float64      `json:"top_p,omitempty" yaml:"top_p,omitempty"`
	TopK           *int          `json:"top_k,omitempty" yaml:"top_k,omitempty"`
	MaxTokens      int           `json:"max_tokens,omitempty" yaml:"max_tokens,omitempty"`
	Seed           *int          `json:"seed,omitempty" yaml:"seed,omitempty"`
	EnableThinking *bool         `json:"enable_thinking,omitempty" yaml:"enable_thinking,omitempty"`
	// Stream asks for server-sent events; the client assembles the deltas.
	Stream bool `json:"stream,omitempty" yaml:"stream,omitempty"`
	// MaxRetries bounds retries of transient failures; 0 means DefaultMaxRetries.
	MaxRetries int `json:"max_retries,omitempty" yaml:"max_retries,omitempty"`
	// Backoff is the first retry delay, doubled per retry up to 30s; 0 means 500ms.
	Backoff time.Duration `json:"backoff,omitempty" yaml:"backoff,omitempty"`
	// MaxResponseBytes caps one reply's HTTP body; 0 means MaxResponseBytes.
	MaxResponseBytes int64 `json:"max_response_bytes,omitempty" yaml:"max_response_bytes,omitempty"`
	// DryRun marks the built-in scripted model; it is shown wherever the model is named.
	DryRun bool `json:"dry_run,omitempty" yaml:"dry_run,omitempty"`
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
	if c.MaxConcurrency < 0 || c.MaxTokens < 0 || c.MaxRetries < 0 || c.Timeout < 0 || c.MaxResponseBytes < 0 {
		return fmt.Errorf("model %s: max_concurrency, max_tokens, max_retries, timeout and max_response_bytes must not be negative", c.Name)
	}
	return nil
}

// sampling applies the DESIGN.md defaults to the unset fields.
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
	if c.MaxTokens > 0 {
		s.MaxTokens = c.MaxTokens
	}
	return s
}

func (c Config) thinking() bool { return c.EnableThinking == nil || *c.EnableThinking }

// apiKey reads the key from the environment variable or file; a missing key
// is allowed (local endpoints need none), an unreadable file is not.
func (c Config) apiKey() (string, error) {
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
