package daemon

import (
	"log/slog"
	"time"

	"github.com/mass-dev/mass/daemon/config"
	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/kubernetes"
)

// kubernetesConfig is the kubernetes backend's configuration from massd's
// sandbox.kubernetes section.
func kubernetesConfig(cfg *config.Config, daemonID string, pol sandbox.Policy, log *slog.Logger) kubernetes.Config {
	k := cfg.Sandbox.Kubernetes
	kc := kubernetes.Config{Kubeconfig: k.Kubeconfig, Namespace: k.Namespace, RuntimeClass: k.RuntimeClass,
		RuncClass: k.RuncClass, NodeSelector: k.NodeSelector, Image: k.Image, PullPolicy: k.PullPolicy,
		WorkspaceDir: k.WorkspaceDir, SeccompLocalhost: k.SeccompLocalhost, CPURequest: k.CPURequest,
		MemoryRequest: k.MemoryRequest, MaxBoxes: k.MaxBoxes, EpisodeBoxes: k.EpisodeBoxes,
		DaemonID: daemonID, Policy: pol, Strict: cfg.Sandbox.Strict, Logger: log}
	// Validate has checked it parses.
	kc.StartTimeout, _ = time.ParseDuration(k.StartTimeout)
	if kc.Image == "" {
		kc.Image = kubernetes.DefaultImage
	}
	return kc
}
