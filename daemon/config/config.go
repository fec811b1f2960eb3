// Package config is massd's configuration: a YAML file, then MASS_* environment
// variables, then command-line flags, validated with errors that name the
// field and the fix.
package config

import (
	"log/slog"
	"os"
	"path/filepath"
	"time"
)

// Defaults.
const (
	DefaultSandboxImage   = "mass-agent:latest"
	DefaultTestImage      = "mass-test:latest"
	DefaultRuntime        = "runc"
	DefaultHelperName     = "mass-sandbox-helper"
	DefaultTrainerName    = "mass-train"
	DefaultJobConcurrency = 2
	DefaultModelTimeout   = 10 * time.Minute
	DefaultModelConc      = 4
)

// Config is everything massd reads at start-up.
type Config struct {
	Socket  string            `yaml:"socket"`   // unix socket path
	DataDir string            `yaml:"data_dir"` // state directory
	TCP     TCP               `yaml:"tcp"`
	Log     Log               `yaml:"log"`
	Jobs    Jobs              `yaml:"jobs"`
	Models  map[string]*Model `yaml:"models"`
	Sandbox Sandbox           `yaml:"sandbox"`
	Trainer Trainer           `yaml:"trainer"`
}

// TCP is the optional TCP listener. It always requires a bearer token.
type TCP struct {
	Listen    string `yaml:"listen"`     // host:port; empty disables TCP
	TokenFile string `yaml:"token_file"` // file holding the bearer token
}

// Log selects the log format and level.
type Log struct {
	Format string `yaml:"format"` // text | json
	Level  string `yaml:"level"`  // debug | info | warn | error
}

// Jobs configures the job manager.
type Jobs struct {
	Concurrency int `yaml:"concurrency"` // jobs running at once
}

// Model is one OpenAI-compatible model endpoint. API keys are read from
// APIKeyEnv or APIKeyFile when needed and never stored or logged here.
type Model struct {
	BaseURL        string        `yaml:"base_url"`
	Model          string        `yaml:"model"`
	APIKeyEnv      string        `yaml:"api_key_env"`
	APIKeyFile     string        `yaml:"api_key_file"`
	MaxConcurrency int           `yaml:"max_concurrency"`
	Timeout        time.Duration `yaml:"timeout"`
	Temperature    *float64      `yaml:"temperature"`
	TopP           *float64      `yaml:"top_p"`
	TopK           *int          `yaml:"top_k"`
	MaxTokens      *int          `yaml:"max_tokens"`
	EnableThinking *bool         `yaml:"enable_thinking"`
	// Stream asks the endpoint for server-sent events.
	Stream bool `yaml:"stream"`
	// MaxResponseBytes caps one reply's body; 0 means the 16 MiB default.
	MaxResponseBytes int64 `yaml:"max_response_bytes"`
}

// Sandbox configures agent containers.
type Sandbox struct {
	Image     string `yaml:"image"`
	TestImage string `yaml:"test_image"`
	Runtime   string `yaml:"runtime"` // runc | runsc
	Helper    string `yaml:"helper"`  // sandbox helper binary
	Strict    bool   `yaml:"strict"`
}

// Trainer locates the trainer binaries.
type Trainer struct {
	Binary     string `yaml:"binary"`
	CUDABinary string `yaml:"cuda_binary"`
}

// Default returns the configuration used when nothing is set.
func Default() *Config {
	exeDir := ""
	if exe, err := os.Executable(); err == nil {
		exeDir = filepath.Dir(exe)
	}
	return &Config{
		Socket:  DefaultSocket(),
		DataDir: DefaultDataDir(),
		Log:     Log{Format: "text", Level: "info"},
		Jobs:    Jobs{Concurrency: DefaultJobConcurrency},
		Models:  map[string]*Model{},
		Sandbox: Sandbox{
			Image:     DefaultSandboxImage,
			TestImage: DefaultTestImage,
			Runtime:   DefaultRuntime,
			Helper:    filepath.Join(exeDir, DefaultHelperName),
		},
		Trainer: Trainer{Binary: filepath.Join(exeDir, DefaultTrainerName), CUDABinary: filepath.Join(exeDir, DefaultTrainerName+"-cuda")},
	}
}

// DefaultSocket is $XDG_RUNTIME_DIR/mass/massd.sock, else /run/mass/massd.sock.
func DefaultSocket() string {
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "mass", "massd.sock")
	}
	return "/run/mass/massd.sock"
}

// DefaultDataDir is /var/lib/mass for root, else ~/.local/share/mass.
func DefaultDataDir() string {
	if os.Geteuid() == 0 {
		return "/var/lib/mass"
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "share", "mass")
	}
	return "/var/lib/mass"
}

// LogValue keeps secrets out of logs: only the key's source is shown.
func (m *Model) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("base_url", m.BaseURL),
		slog.String("model", m.Model),
		slog.String("api_key_env", m.APIKeyEnv),
		slog.String("api_key_file", m.APIKeyFile),
	)
}

// APIKey reads the model's API key from its file or environment variable;
// empty when neither is set.
func (m *Model) APIKey() (string, error) {
	if m.APIKeyFile != "" {
		b, err := os.ReadFile(m.APIKeyFile)
		if err != nil {
			return "", err
		}
		return trimSpace(string(b)), nil
	}
	if m.APIKeyEnv != "" {
		return os.Getenv(m.APIKeyEnv), nil
	}
	return "", nil
}

func trimSpace(s string) string {
	for len(s) > 0 && (s[len(s)-1] == '\n' || s[len(s)-1] == '\r' || s[len(s)-1] == ' ') {
		s = s[:len(s)-1]
	}
	return s
}
