package kubernetes

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/boxhost"
)

// Every object carries the backends' labels (boxhost.Labels); the
// keeper's agent label is keeperLabel.
const (
	kindAgent     = boxhost.KindAgent
	kindWorkspace = boxhost.KindWorkspace
	keeperAgent   = boxhost.KeeperAgent
	keeperLabel   = "x_workspace" // label values must start alphanumeric
)

// podName is the pod of (episode, agent): deterministic, so a second
// Create of a live pair collides, and a DNS-1123 name whatever the ids.
func (r *Runtime) podName(episode, agent string) string {
	s := sha256.Sum256([]byte(r.cfg.DaemonID + "\x00" + episode + "\x00" + agent))
	return "mass-" + hex.EncodeToString(s[:8])
}

// wsDir is the node directory name of an episode's workspace.
func (r *Runtime) wsDir(episode string) string { return r.cfg.DaemonID + "-" + episode }

func (r *Runtime) labels(episode, agent, kind string) map[string]string {
	if agent == keeperAgent {
		agent = keeperLabel
	}
	return boxhost.Labels(r.cfg.DaemonID, episode, agent, kind)
}

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// podOpts are the per-pod facts podSpec needs besides the policy.
type podOpts struct {
	name, episode, agent, kind string
	image, runtimeClass, node  string
	user                       string // "uid:gid"
	readOnlyWS                 bool
	env                        map[string]string
	command                    []string
}

// podSpec is a pod of policy p. It applies every field a pod can carry;
// the rest (pids, nofile) are node settings that Report names.
func (r *Runtime) podSpec(p sandbox.Policy, o podOpts) (*corev1.Pod, error) {
	uid, gid, err := sandbox.ParseUser(o.user)
	if err != nil {
		return nil, err
	}
	u, g := int64(uid), int64(gid)
	limits := corev1.ResourceList{}
	if p.NanoCPUs > 0 {
		limits[corev1.ResourceCPU] = *resource.NewMilliQuantity(p.NanoCPUs/1_000_000, resource.DecimalSI)
	}
	if p.MemoryBytes > 0 {
		// /tmp's pages count toward the pod's memory: the limit makes room
		// for them, as the Docker backend does for its tmpfs mounts.
		limits[corev1.ResourceMemory] = *resource.NewQuantity(p.MemoryBytes+p.TmpfsBytes, resource.BinarySI)
	}
	// The writable layer and logs; /tmp is a memory emptyDir and counts
	// toward the memory limit, the workspace toward the episode's directory.
	limits[corev1.ResourceEphemeralStorage] = *resource.NewQuantity(64<<20, resource.BinarySI)
	requests, err := r.requests(limits)
	if err != nil {
		return nil, err
	}
	sc := &corev1.SecurityContext{
		RunAsUser:                &u,
		RunAsGroup:               &g,
		RunAsNonRoot:             ptr(uid != 0),
		AllowPrivilegeEscalation: ptr(!p.NoNewPrivileges),
		Privileged:               ptr(false),
		ReadOnlyRootFilesystem:   ptr(p.ReadOnlyRootfs),
		Capabilities:             &corev1.Capabilities{Drop: caps(p.CapDrop), Add: caps(p.CapAdd)},
		SeccompProfile:           r.seccomp(p),
		ProcMount:                ptr(corev1.DefaultProcMount),
	}
	wsMount := corev1.VolumeMount{Name: "workspace", MountPath: sandbox.WorkspaceMount, SubPath: r.wsDir(o.episode), ReadOnly: o.readOnlyWS}
	tmpfs := resource.NewQuantity(max(p.TmpfsBytes, 1<<20), resource.BinarySI)
	dirType := corev1.HostPathDirectoryOrCreate
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:        o.name,
			Namespace:   r.cfg.Namespace,
			Labels:      r.labels(o.episode, o.agent, o.kind),
			Annotations: map[string]string{"mass.dev/episode": o.episode, "mass.dev/agent": o.agent},
		},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			AutomountServiceAccountToken:  ptr(false),
			EnableServiceLinks:            ptr(false),
			HostNetwork:                   false,
			HostPID:                       false,
			HostIPC:                       false,
			ShareProcessNamespace:         ptr(false),
			TerminationGracePeriodSeconds: ptr(int64(1)),
			NodeSelector:                  r.cfg.NodeSelector,
			DNSPolicy:                     corev1.DNSNone,
			DNSConfig:                     &corev1.PodDNSConfig{Nameservers: []string{"127.0.0.1"}},
			SecurityContext: &corev1.PodSecurityContext{
				RunAsUser: &u, RunAsGroup: &g, RunAsNonRoot: ptr(uid != 0),
				SeccompProfile: r.seccomp(p),
			},
			Containers: []corev1.Container{{
				Name:            "box",
				Image:           o.image,
				ImagePullPolicy: corev1.PullPolicy(r.cfg.PullPolicy),
				Command:         o.command,
				WorkingDir:      "/",
				Env:             envList(o.env),
				SecurityContext: sc,
				Resources:       corev1.ResourceRequirements{Limits: limits, Requests: requests},
				VolumeMounts: []corev1.VolumeMount{wsMount,
					{Name: "tmp", MountPath: "/tmp"}},
				TerminationMessagePolicy: corev1.TerminationMessageReadFile,
			}},
			Volumes: []corev1.Volume{
				{Name: "workspace", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: r.cfg.WorkspaceDir, Type: &dirType}}},
				{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: tmpfs}}},
			},
		},
	}
	if dnsLabel.MatchString(o.agent) {
		pod.Spec.Hostname = o.agent
	}
	if o.runtimeClass != "" {
		pod.Spec.RuntimeClassName = ptr(o.runtimeClass)
	}
	if o.node != "" {
		pod.Spec.Affinity = nodeAffinity(o.node)
	}
	return pod, nil
}

// requests are the configured requests, never above the limits.
func (r *Runtime) requests(limits corev1.ResourceList) (corev1.ResourceList, error) {
	out := corev1.ResourceList{}
	for name, v := range map[corev1.ResourceName]string{corev1.ResourceCPU: r.cfg.CPURequest, corev1.ResourceMemory: r.cfg.MemoryRequest} {
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return nil, fmt.Errorf("kubernetes %s request %q: %v: %w", name, v, err, sandbox.ErrInvalid)
		}
		if l, ok := limits[name]; ok && q.Cmp(l) > 0 {
			q = l
		}
		out[name] = q
	}
	return out, nil
}

// nodeAffinity pins a pod to the node of its episode's workspace.
func nodeAffinity(node string) *corev1.Affinity {
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node}}},
		}}},
	}}
}

// seccomp maps the policy's profile: the project's profile where the
// kubelet has it as Localhost, else the runtime's default.
func (r *Runtime) seccomp(p sandbox.Policy) *corev1.SeccompProfile {
	switch {
	case p.Seccomp == "unconfined":
		return &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}
	case p.Seccomp == sandbox.SeccompMass && r.cfg.SeccompLocalhost != "":
		return &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr(r.cfg.SeccompLocalhost)}
	}
	return &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
}

func caps(names []string) []corev1.Capability {
	var out []corev1.Capability
	for _, n := range names {
		out = append(out, corev1.Capability(n))
	}
	return out
}

func envList(env map[string]string) []corev1.EnvVar {
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]corev1.EnvVar, 0, len(keys))
	for _, k := range keys {
		out = append(out, corev1.EnvVar{Name: k, Value: env[k]})
	}
	return out
}

func ptr[T any](v T) *T { return &v }
