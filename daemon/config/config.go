// Package config is massd's configuration: a YAML file, then MASS_* environment
// variables, then command-line flags, all made from one settings table
// (settings.go), validated with errors that name the field and the fix.
package config

import (
	"os"
	"path/filepath"

	"github.com/mass-dev/mass/agents/model"
)

// Defaults.
const (
	DefaultSandboxImage   = "mass-agent:latest"
	DefaultTestImage      = "mass-test:latest"
	DefaultRuntime        = "auto" // runsc where the engine registered it, else runc
	DefaultHelperName     = "mass-sandbox-helper"
	DefaultTrainerName    = "mass-train"
	DefaultJobConcurrency = 2
	DefaultModelTimeout   = model.DefaultTimeout     // models.*.timeout
	DefaultModelConc      = model.DefaultConcurrency // models.*.max_concurrency
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
	Judges  []Judge           `yaml:"judges"` // external judges of the evaluation (judges.go)
	// Prices are the models' API prices (USD per million tokens), by
	// models entry; verdicts and the report carry their cost_usd.
	Prices map[string]model.Price `yaml:"prices"`
	// Retention prunes old episodes' exported workspaces (never records).
	Retention Retention `yaml:"retention"`
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

// Model is one OpenAI-compatible model endpoint: agents/model.Config, the
// one model configuration, so every knob of the client is settable here.
type Model = model.Config

// Sandbox configures agent containers.
type Sandbox struct {
	Image     string `yaml:"image"`
	TestImage string `yaml:"test_image"`
	Runtime   string `yaml:"runtime"` // auto | runc | runsc
	Helper    string `yaml:"helper"`  // sandbox helper binary
	Strict    bool   `yaml:"strict"`
	// MaxGPUs is the most NVIDIA devices one box may get (a task's
	// limits.gpus); 0, the default, refuses every task that asks for one.
	MaxGPUs int `yaml:"max_gpus"`
	// GPULibDirs are the host folders searched for the driver libraries a
	// GPU box gets; empty: docker.DefaultGPULibDirs.
	GPULibDirs []string `yaml:"gpu_lib_dirs"`
	// Backend is where boxes run: "docker" (default, the host's engine)
	// or "kubernetes" (a cluster, configured under kubernetes).
	Backend    string     `yaml:"backend"`
	Kubernetes Kubernetes `yaml:"kubernetes"`
}

// Kubernetes configures the kubernetes sandbox backend (sandbox/kubernetes;
// empty fields take that package's defaults).
type Kubernetes struct {
	Kubeconfig       string            `yaml:"kubeconfig"` // empty: in-cluster
	Namespace        string            `yaml:"namespace"`
	RuntimeClass     string            `yaml:"runtime_class"` // gVisor's RuntimeClass
	RuncClass        string            `yaml:"runc_class"`
	NodeSelector     map[string]string `yaml:"node_selector"`
	Image            string            `yaml:"image"` // with the helper built in
	PullPolicy       string            `yaml:"pull_policy"`
	WorkspaceDir     string            `yaml:"workspace_dir"`
	SeccompLocalhost string            `yaml:"seccomp_localhost"`
	CPURequest       string            `yaml:"cpu_request"`
	MemoryRequest    string            `yaml:"memory_request"`
	// MaxBoxes caps the boxes running at once: 0 follows the cluster's
	// capacity (nodes' allocatable, the namespace's ResourceQuotas), -1
	// sets no cap. Episodes past it wait for room instead of failing.
	MaxBoxes int `yaml:"max_boxes"`
	// EpisodeBoxes is what one episode reserves of MaxBoxes (keeper,
	// orchestrator, parallel sub-agents); 0: the backend's default, 6.
	EpisodeBoxes int `yaml:"episode_boxes"`
	// StartTimeout bounds a pod's wait to run (Pending for capacity, 429s
	// and an exhausted quota included), a Go duration; empty: 3m.
	StartTimeout string `yaml:"start_timeout"`
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
