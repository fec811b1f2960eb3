package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/mass-dev/mass/daemon/serving"
	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/errclass"
	"github.com/mass-dev/mass/sandbox"
)

// FieldError is a configuration problem: the field, what is wrong, the fix
// (errclass.FieldError, mass's one field error).
type FieldError = errclass.FieldError

// fieldError is a config FieldError; its message reads "config field: msg".
func fieldError(field, msg string) error {
	return fmt.Errorf("config %w", &FieldError{Field: field, Msg: msg})
}

// Validate checks every field and fills per-model defaults. It returns all
// problems joined, each a *FieldError.
func (c *Config) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fieldError(field, fmt.Sprintf(format, args...)))
	}
	c.validateListeners(bad)
	c.validateDaemon(bad)
	if _, err := c.Retention.KeepFor(); err != nil {
		bad("retention.keep_workspaces", "%v", err)
	}
	if c.Retention.KeepLast < 0 {
		bad("retention.keep_last", "%d must not be negative", c.Retention.KeepLast)
	}
	names := make([]string, 0, len(c.Models))
	for name := range c.Models {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if c.Models[name] == nil {
			bad("models."+name, "is empty; give at least base_url and model")
			continue
		}
		validateModel(name, c.Models[name], bad)
	}
	c.validateJudges(bad)
	c.validatePrices(bad)
	return errors.Join(errs...)
}

// badFunc records one problem with a field.
type badFunc func(field, format string, args ...any)

// validateListeners checks the socket, the data dir and the TCP listener.
func (c *Config) validateListeners(bad badFunc) {
	if c.Socket == "" {
		bad("socket", "is empty; set --socket PATH or MASS_SOCKET")
	} else if !filepath.IsAbs(c.Socket) {
		bad("socket", "%q must be an absolute path", c.Socket)
	} else if len(c.Socket) > 107 {
		bad("socket", "path is %d bytes; unix sockets allow at most 107, choose a shorter path", len(c.Socket))
	}
	if c.DataDir == "" || !filepath.IsAbs(c.DataDir) {
		bad("data_dir", "%q must be an absolute directory path; set --data-dir DIR or MASS_DATA_DIR", c.DataDir)
	}
	if c.TCP.Listen != "" {
		if _, _, err := net.SplitHostPort(c.TCP.Listen); err != nil {
			bad("tcp.listen", "%q is not host:port, e.g. 127.0.0.1:7070", c.TCP.Listen)
		}
		if c.TCP.TokenFile == "" {
			bad("tcp.token_file", "is required when tcp.listen is set: TCP clients must present a bearer token; set --token-file FILE")
		}
	}
}

// validateDaemon checks the log, jobs and sandbox sections.
func (c *Config) validateDaemon(bad badFunc) {
	switch c.Log.Format {
	case "text", "json":
	default:
		bad("log.format", "%q must be text or json", c.Log.Format)
	}
	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		bad("log.level", "%q must be debug, info, warn or error", c.Log.Level)
	}
	if c.Jobs.Concurrency < 1 || c.Jobs.Concurrency > 1024 {
		bad("jobs.concurrency", "%d must be between 1 and 1024", c.Jobs.Concurrency)
	}
	switch c.Sandbox.Runtime {
	case "auto", "runc", "runsc":
	default:
		bad("sandbox.runtime", "%q must be auto (runsc where the engine has it, else runc), runc or runsc (gVisor)", c.Sandbox.Runtime)
	}
	switch c.Sandbox.Backend {
	case "", "docker", "kubernetes":
	default:
		bad("sandbox.backend", "%q must be docker or kubernetes", c.Sandbox.Backend)
	}
	switch c.Sandbox.Kubernetes.PullPolicy {
	case "", "Never", "IfNotPresent", "Always":
	default:
		bad("sandbox.kubernetes.pull_policy", "%q must be Never, IfNotPresent or Always", c.Sandbox.Kubernetes.PullPolicy)
	}
	if k := c.Sandbox.Kubernetes; k.MaxBoxes < -1 {
		bad("sandbox.kubernetes.max_boxes", "%d must be -1 (no cap), 0 (follow the cluster's capacity) or a number of boxes", k.MaxBoxes)
	}
	if k := c.Sandbox.Kubernetes; k.EpisodeBoxes < 0 {
		bad("sandbox.kubernetes.episode_boxes", "%d must be 0 (the default, 6) or the boxes one episode reserves", k.EpisodeBoxes)
	}
	if st := c.Sandbox.Kubernetes.StartTimeout; st != "" {
		if d, err := time.ParseDuration(st); err != nil || d <= 0 {
			bad("sandbox.kubernetes.start_timeout", "%q must be a positive duration such as 3m or 90s", st)
		}
	}
	if c.Sandbox.MaxGPUs < 0 || c.Sandbox.MaxGPUs > sandbox.MaxGPUs {
		bad("sandbox.max_gpus", "%d must be 0 (no GPU boxes) to %d", c.Sandbox.MaxGPUs, sandbox.MaxGPUs)
	}
	for i, d := range c.Sandbox.GPULibDirs {
		if !filepath.IsAbs(d) {
			bad(fmt.Sprintf("sandbox.gpu_lib_dirs[%d]", i), "%q must be an absolute host path", d)
		}
	}
	if c.Sandbox.Image == "" {
		bad("sandbox.image", "is empty; the default is %s", DefaultSandboxImage)
	}
	if c.Sandbox.TestImage == "" {
		bad("sandbox.test_image", "is empty; the default is %s", DefaultTestImage)
	}
}

// validateModel checks one entry of the models section and fills its
// defaults (model.Config.WithDefaults).
func validateModel(name string, m *Model, bad badFunc) {
	f := "models." + name
	u, err := url.Parse(m.BaseURL)
	if m.BaseURL == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		bad(f+".base_url", "%q must be an http(s) URL such as http://127.0.0.1:8000/v1", m.BaseURL)
	}
	if strings.TrimSpace(m.Model) == "" {
		bad(f+".model", "is required: the model name the endpoint serves")
	}
	if m.APIKeyEnv != "" && m.APIKeyFile != "" {
		bad(f+".api_key_file", "set api_key_env or api_key_file, not both")
	}
	if m.MaxConcurrency < 0 {
		bad(f+".max_concurrency", "%d must be positive", m.MaxConcurrency)
	}
	if m.Timeout < 0 {
		bad(f+".timeout", "%v must be positive, e.g. 10m", m.Timeout)
	}
	if m.MaxRetries < 0 {
		bad(f+".max_retries", "%d must not be negative", m.MaxRetries)
	}
	if m.Backoff < 0 {
		bad(f+".backoff", "%v must be positive, e.g. 500ms", m.Backoff)
	}
	if m.MaxResponseBytes < 0 {
		bad(f+".max_response_bytes", "%d must not be negative; 0 means the 16 MiB default", m.MaxResponseBytes)
	}
	if m.Temperature != nil && (*m.Temperature < 0 || *m.Temperature > 2) {
		bad(f+".temperature", "%v must be between 0 and 2", *m.Temperature)
	}
	if m.TopP != nil && (*m.TopP <= 0 || *m.TopP > 1) {
		bad(f+".top_p", "%v must be in (0, 1]", *m.TopP)
	}
	if m.TopK != nil && *m.TopK < -1 {
		bad(f+".top_k", "%d must be -1 (off) or positive", *m.TopK)
	}
	if m.MaxTokens != nil && *m.MaxTokens <= 0 {
		bad(f+".max_tokens", "%d must be positive", *m.MaxTokens)
	}
	m.Name = name
	if err := m.CheckProvider(); err != nil {
		bad(f+".provider", "%v", err)
	}
	if b := m.Budget; b != nil && ((b.OptimizerMaxTokens != nil && *b.OptimizerMaxTokens <= 0) || (b.JudgeMaxTokens != nil && *b.JudgeMaxTokens <= 0)) {
		bad(f+".budget", "optimizer_max_tokens and judge_max_tokens must be positive")
	} else if err := m.CheckBudget(); err != nil {
		bad(f+".budget", "%v", err)
	}
	*m = m.WithDefaults()
	if sv := m.Serving; sv != nil {
		// lora goes with command or vllm: adapters load at runtime onto the
		// server while it holds their base, and a generation whose base it
		// does not hold restarts it on its merged folder. command and vllm
		// are two ways of giving the one serve command.
		ways := 0
		for _, set := range []bool{sv.LoRA != "", len(sv.Command) > 0, sv.VLLM != nil} {
			if set {
				ways++
			}
		}
		switch {
		case len(sv.Command) > 0 && sv.VLLM != nil:
			bad(f+".serving", "set one of command or vllm (lora: runtime may go with either)")
		case sv.LoRA != "" && sv.LoRA != "runtime":
			bad(f+".serving.lora", "%q: the only way is runtime (vLLM's /v1/load_lora_adapter)", sv.LoRA)
		case ways == 0:
			bad(f+".serving", "is empty; give lora: runtime, vllm: {...} or command: [...]")
		case sv.VLLM != nil && !datadir.ValidID(name):
			bad(f+".serving.vllm", "the entry's name %q names its log file (serving/<name>.log): use letters, digits, '.', '_' and '-'", name)
		case sv.VLLM != nil:
			if err := serving.CheckVLLM(*sv.VLLM, m.BaseURL); err != nil {
				bad(f+".serving.vllm", "%v", err)
			}
		}
	}
}
