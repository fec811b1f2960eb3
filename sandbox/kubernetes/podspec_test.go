package kubernetes

import (
	"errors"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/boxhost"
)

func testRuntime() *Runtime {
	cfg := Config{DaemonID: "d1", SeccompLocalhost: "mass.json"}.withDefaults()
	return &Runtime{cfg: cfg, runtime: sandbox.RuntimeRunsc}
}

// TestPodHardening: every policy field a pod can carry is on the pod.
func TestPodHardening(t *testing.T) {
	r := testRuntime()
	p := sandbox.DefaultPolicy()
	pod, err := r.podSpec(p, podOpts{name: "n", episode: "ep1", agent: "worker-1", kind: kindAgent,
		image: "img", runtimeClass: "gvisor", node: "node-a", user: p.User, command: []string{sandbox.HelperMount, "pause"}})
	if err != nil {
		t.Fatal(err)
	}
	s := pod.Spec
	c := s.Containers[0]
	sc := c.SecurityContext
	checks := []struct {
		what string
		ok   bool
	}{
		{"uid 65534", *sc.RunAsUser == 65534 && *sc.RunAsGroup == 65534 && *sc.RunAsNonRoot},
		{"caps drop ALL", len(sc.Capabilities.Drop) == 1 && sc.Capabilities.Drop[0] == "ALL" && len(sc.Capabilities.Add) == 0},
		{"no privilege escalation", !*sc.AllowPrivilegeEscalation && !*sc.Privileged},
		{"read-only root", *sc.ReadOnlyRootFilesystem},
		{"seccomp localhost", sc.SeccompProfile.Type == corev1.SeccompProfileTypeLocalhost && *sc.SeccompProfile.LocalhostProfile == "mass.json"},
		{"no token", !*s.AutomountServiceAccountToken},
		{"no service links", !*s.EnableServiceLinks},
		{"no host namespaces", !s.HostNetwork && !s.HostPID && !s.HostIPC && !*s.ShareProcessNamespace},
		{"runtime class", *s.RuntimeClassName == "gvisor"},
		{"never restarts", s.RestartPolicy == corev1.RestartPolicyNever},
		{"cpu limit", c.Resources.Limits.Cpu().MilliValue() == 1000},
		{"memory limit", c.Resources.Limits.Memory().Value() == p.MemoryBytes+p.TmpfsBytes},
		{"ephemeral-storage limit", !c.Resources.Limits.StorageEphemeral().IsZero()},
		{"requests within limits", c.Resources.Requests.Cpu().Cmp(*c.Resources.Limits.Cpu()) <= 0},
		{"workspace subPath", c.VolumeMounts[0].MountPath == sandbox.WorkspaceMount && c.VolumeMounts[0].SubPath == "d1-ep1"},
		{"tmp in memory", s.Volumes[1].EmptyDir.Medium == corev1.StorageMediumMemory && s.Volumes[1].EmptyDir.SizeLimit.Value() == p.TmpfsBytes},
		{"pinned to the workspace node", s.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchFields[0].Values[0] == "node-a"},
		{"no cluster DNS", s.DNSPolicy == corev1.DNSNone},
		{"labels", pod.Labels[boxhost.LabelDaemon] == "d1" && pod.Labels[boxhost.LabelEpisode] == "ep1" && pod.Labels[boxhost.LabelAgent] == "worker-1" && pod.Labels[boxhost.LabelKind] == kindAgent},
		{"hostname", s.Hostname == "worker-1"},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("pod lacks %s", c.what)
		}
	}
}

// TestPodWeakenings: a weakened policy shows on the pod, so the probes
// that fail for it on the Docker backend have the same cause here.
func TestPodWeakenings(t *testing.T) {
	r := testRuntime()
	p := sandbox.DefaultPolicy()
	p.CapAdd = []string{"SYS_PTRACE"}
	p.ReadOnlyRootfs = false
	p.NoNewPrivileges = false
	p.Seccomp = sandbox.SeccompEngine
	p.User = "0:0"
	pod, err := r.podSpec(p, podOpts{name: "n", episode: "ep1", agent: "A_b", kind: kindAgent, image: "img", user: p.User})
	if err != nil {
		t.Fatal(err)
	}
	sc := pod.Spec.Containers[0].SecurityContext
	if *sc.ReadOnlyRootFilesystem || !*sc.AllowPrivilegeEscalation || sc.Capabilities.Add[0] != "SYS_PTRACE" ||
		sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault || *sc.RunAsNonRoot || *sc.RunAsUser != 0 {
		t.Errorf("weakened policy not on the pod: %+v", sc)
	}
	if pod.Spec.Hostname != "" || pod.Spec.RuntimeClassName != nil {
		t.Errorf("hostname %q (agent id is no DNS label), runtime class %v", pod.Spec.Hostname, pod.Spec.RuntimeClassName)
	}
}

func TestPodNames(t *testing.T) {
	r := testRuntime()
	a, b := r.podName("ep", "a"), r.podName("ep", "b")
	if a == b || a != r.podName("ep", "a") || !dnsLabel.MatchString(a) {
		t.Errorf("pod names %q %q", a, b)
	}
	r2 := testRuntime()
	r2.cfg.DaemonID = "d2"
	if r2.podName("ep", "a") == a {
		t.Errorf("two daemons share pod name %s", a)
	}
	if validID(fmt.Sprintf("%064d", 1)) {
		t.Errorf("a 64-character id fits no label value")
	}
}

func TestRequestsCapped(t *testing.T) {
	r := testRuntime()
	r.cfg.CPURequest = "4"
	p := sandbox.DefaultPolicy()
	pod, err := r.podSpec(p, podOpts{name: "n", episode: "e", agent: "a", kind: kindAgent, image: "i", user: p.User})
	if err != nil {
		t.Fatal(err)
	}
	if got := pod.Spec.Containers[0].Resources.Requests.Cpu().MilliValue(); got != 1000 {
		t.Errorf("cpu request %dm, want the 1000m limit", got)
	}
	r.cfg.CPURequest = "lots"
	if _, err := r.podSpec(p, podOpts{name: "n", episode: "e", agent: "a", image: "i", user: p.User}); !errors.Is(err, sandbox.ErrInvalid) {
		t.Errorf("bad request: %v", err)
	}
}

func TestWrapErr(t *testing.T) {
	gr := schema.GroupResource{Resource: "pods"}
	for _, tc := range []struct {
		err  error
		want error
	}{
		{apierrors.NewNotFound(gr, "x"), sandbox.ErrNotFound},
		{apierrors.NewAlreadyExists(gr, "x"), sandbox.ErrInvalid},
		{apierrors.NewForbidden(gr, "x", errors.New("no")), sandbox.ErrDenied},
		{apierrors.NewTooManyRequests("slow down", 1), sandbox.ErrUnavailable},
		{errors.New("connection refused"), sandbox.ErrUnavailable},
	} {
		if got := wrapErr("op", tc.err); !errors.Is(got, tc.want) {
			t.Errorf("%v: got %v, want %v", tc.err, got, tc.want)
		}
	}
}
