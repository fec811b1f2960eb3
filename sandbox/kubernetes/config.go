package kubernetes

import (
	"log/slog"
	"time"

	"github.com/mass-dev/mass/sandbox"
)

// Config is the kubernetes backend's part of massd's sandbox configuration
// (sandbox.kubernetes in massd.yaml).
type Config struct {
	// Kubeconfig is the path of a kubeconfig file; empty means in-cluster.
	Kubeconfig string `yaml:"kubeconfig" json:"kubeconfig"`
	// Namespace holds every pod; DefaultNamespace when empty.
	Namespace string `yaml:"namespace" json:"namespace"`
	// RuntimeClass is the RuntimeClass of gVisor pods; DefaultRuntimeClass when empty.
	RuntimeClass string `yaml:"runtime_class" json:"runtime_class"`
	// RuncClass is the RuntimeClass of runc pods; empty means the node's default handler.
	RuncClass string `yaml:"runc_class" json:"runc_class"`
	// NodeSelector restricts boxes to sandbox nodes (those whose CNI gives
	// pods no route anywhere).
	NodeSelector map[string]string `yaml:"node_selector" json:"node_selector"`
	// Image is the agent image, with the helper at sandbox.HelperMount;
	// DefaultImage when empty.
	Image string `yaml:"image" json:"image"`
	// PullPolicy is the pods' imagePullPolicy; "Never" (images are
	// imported into the nodes' containerd) when empty.
	PullPolicy string `yaml:"pull_policy" json:"pull_policy"`
	// WorkspaceDir is the directory on each node below which workspaces
	// live; DefaultWorkspaceDir when empty.
	WorkspaceDir string `yaml:"workspace_dir" json:"workspace_dir"`
	// SeccompLocalhost names the project's seccomp profile as the kubelet
	// has it (relative to its seccomp directory); empty means RuntimeDefault.
	SeccompLocalhost string `yaml:"seccomp_localhost" json:"seccomp_localhost"`
	// CPURequest and MemoryRequest are what each box requests (the limits
	// are the policy's); the scheduler packs boxes by them.
	CPURequest    string `yaml:"cpu_request" json:"cpu_request"`
	MemoryRequest string `yaml:"memory_request" json:"memory_request"`
	// StartTimeout bounds the wait for a pod to run (Pending for capacity,
	// 429s and an exhausted ResourceQuota included).
	StartTimeout time.Duration `yaml:"start_timeout" json:"start_timeout"`
	// MaxBoxes caps this daemon's boxes at once (capacity.go): 0 follows
	// the cluster (the sandbox nodes' allocatable and the namespace's
	// ResourceQuotas over one box's requests, read every 30 s), -1 sets
	// no cap (every episode starts; Kubernetes queues its pods).
	MaxBoxes int `yaml:"max_boxes" json:"max_boxes"`
	// EpisodeBoxes is what one episode reserves of MaxBoxes: its keeper,
	// the orchestrator and the sub-agents that run at once;
	// DefaultEpisodeBoxes when 0.
	EpisodeBoxes int `yaml:"episode_boxes" json:"episode_boxes"`

	DaemonID string         `yaml:"-" json:"-"` // mass.daemon label; required
	Policy   sandbox.Policy `yaml:"-" json:"-"` // default policy; DefaultPolicy() when zero
	Strict   bool           `yaml:"-" json:"-"`
	Logger   *slog.Logger   `yaml:"-" json:"-"`
}

// Defaults of Config.
const (
	DefaultNamespace    = "mass-sandbox"
	DefaultRuntimeClass = "gvisor"
	DefaultImage        = "mass-agent-k8s:latest"
	DefaultWorkspaceDir = "/var/lib/mass-k8s/workspaces"
	DefaultStartTimeout = 3 * time.Minute
	// DefaultEpisodeBoxes: keeper, orchestrator and agents/episode's
	// DefaultParallelAgents (4) sub-agents.
	DefaultEpisodeBoxes = 6
)

func (c Config) withDefaults() Config {
	if c.Namespace == "" {
		c.Namespace = DefaultNamespace
	}
	if c.RuntimeClass == "" {
		c.RuntimeClass = DefaultRuntimeClass
	}
	if c.Image == "" {
		c.Image = DefaultImage
	}
	if c.PullPolicy == "" {
		c.PullPolicy = "Never"
	}
	if c.WorkspaceDir == "" {
		c.WorkspaceDir = DefaultWorkspaceDir
	}
	if c.CPURequest == "" {
		c.CPURequest = "50m"
	}
	if c.MemoryRequest == "" {
		c.MemoryRequest = "64Mi"
	}
	if c.StartTimeout <= 0 {
		c.StartTimeout = DefaultStartTimeout
	}
	if c.EpisodeBoxes <= 0 {
		c.EpisodeBoxes = DefaultEpisodeBoxes
	}
	if c.Policy.Runtime == "" {
		c.Policy = sandbox.DefaultPolicy()
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}
