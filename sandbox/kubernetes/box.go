package kubernetes

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/boxhost"
)

// box is one agent pod.
type box struct {
	r       *Runtime
	pod     string
	episode string
	agent   string
	policy  sandbox.Policy

	mu      sync.Mutex
	removed bool
}

var _ sandbox.Sandbox = (*box)(nil)

// Create starts an agent pod on the episode's workspace node.
func (r *Runtime) Create(ctx context.Context, spec sandbox.Spec) (sandbox.Sandbox, error) {
	return boxhost.Started(r.create(ctx, spec, false))
}

func (r *Runtime) create(ctx context.Context, spec sandbox.Spec, readOnly bool) (*box, error) {
	if err := boxhost.CheckSpec(spec, validID); err != nil {
		return nil, err
	}
	pol := spec.Policy
	pol.Runtime = r.policyRuntime(pol.Runtime)
	if err := pol.Validate(); err != nil {
		return nil, fmt.Errorf("create sandbox %s/%s: %w", spec.Episode, spec.Agent, err)
	}
	if pol.Egress != nil || pol.GPUs > 0 {
		return nil, fmt.Errorf("create sandbox %s/%s: egress and GPUs are not offered by the kubernetes backend: %w", spec.Episode, spec.Agent, sandbox.ErrDenied)
	}
	if err := boxhost.Weakened(pol, spec, r.cfg.Strict, r.log); err != nil {
		return nil, err
	}
	class, err := r.runtimeClass(pol.Runtime)
	if err != nil {
		return nil, err
	}
	node, err := r.workspaceNode(ctx, spec.Episode)
	if err != nil {
		return nil, fmt.Errorf("create sandbox %s/%s: %w", spec.Episode, spec.Agent, err)
	}
	env, err := boxhost.Env(spec.Env, pol, !readOnly)
	if err != nil {
		return nil, err
	}
	image := spec.Image
	if image == "" {
		image = r.cfg.Image
	}
	name := r.podName(spec.Episode, spec.Agent)
	pod, err := r.podSpec(pol, podOpts{name: name, episode: spec.Episode, agent: spec.Agent, kind: kindAgent,
		image: image, runtimeClass: class, node: node, user: pol.User, readOnlyWS: readOnly, env: env,
		command: []string{sandbox.HelperMount, "pause"}})
	if err != nil {
		return nil, err
	}
	if _, err := r.startPod(ctx, pod); err != nil {
		return nil, fmt.Errorf("create sandbox %s/%s: %w", spec.Episode, spec.Agent, err)
	}
	return &box{r: r, pod: name, episode: spec.Episode, agent: spec.Agent, policy: pol}, nil
}

// validID is sandbox.ValidID within a label value's 63 characters.
func validID(s string) bool { return sandbox.ValidID(s) && len(s) <= 63 }

func (b *box) ID() string    { return b.pod }
func (b *box) Agent() string { return b.agent }

func (b *box) gone() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.removed {
		return fmt.Errorf("sandbox %s/%s removed: %w", b.episode, b.agent, sandbox.ErrNotFound)
	}
	return nil
}

// Exec runs req under the helper's exec wrapper (see the package doc).
func (b *box) Exec(ctx context.Context, req sandbox.ExecRequest) (sandbox.ExecResult, error) {
	cmd, err := boxhost.NewCommand(req, b.policy)
	if err != nil {
		return sandbox.ExecResult{}, err
	}
	if err := b.gone(); err != nil {
		return sandbox.ExecResult{}, err
	}
	// An exec has no working directory or nofile limit of its own: the
	// wrapper sets them.
	flags := []string{"-dir", cmd.Dir}
	if b.policy.NoFile > 0 {
		flags = append(flags, "-nofile", strconv.FormatInt(b.policy.NoFile, 10))
	}
	res, err := b.r.execRaw(ctx, b.pod, execOpts{argv: cmd.Wrapped(flags...), stdin: req.Stdin, maxBytes: cmd.MaxBytes,
		hostTimeout: cmd.HostTimeout(), onAbort: b.killAll})
	if err == nil && res.ExitCode >= 128 {
		// The command killed its wrapper: what it started is reparented
		// to pause and is swept here.
		b.helperCmd(ctx, "orphans")
	}
	if err != nil {
		return res, fmt.Errorf("exec in %s/%s: %w", b.episode, b.agent, err)
	}
	return cmd.Result(res), nil
}

// killAll kills every agent process but pause (the helper's killall).
func (b *box) killAll(ctx context.Context) { b.helperCmd(ctx, "killall") }

func (b *box) helperCmd(ctx context.Context, cmd string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 20*time.Second)
	defer cancel()
	if _, err := b.r.execRaw(ctx, b.pod, execOpts{argv: []string{sandbox.HelperMount, cmd}, maxBytes: 4096}); err != nil {
		b.r.log.Warn("helper "+cmd, "episode", b.episode, "agent", b.agent, "err", err)
	}
}

// Stop kills every process of the box: the pod is deleted (a pod cannot
// be stopped and kept); Remove then has nothing left to do.
func (b *box) Stop(ctx context.Context) error { return b.Remove(ctx) }

// Remove deletes the pod and waits until it is gone. Idempotent.
func (b *box) Remove(ctx context.Context) error {
	b.mu.Lock()
	b.removed = true
	b.mu.Unlock()
	return b.r.deletePod(ctx, b.pod, true)
}

// HostCgroup is the pod's cgroup (v1, cgroupfs driver, relative to each
// controller's mount) on its node: the cgroup that holds the limits of
// every container of the pod and, under gVisor, its sandbox and gofers.
// It is a path on the node, which the probes read only where the node is
// the machine they run on (scripts/k8s-local.sh's cluster).
func (b *box) HostCgroup(ctx context.Context) (string, error) {
	p, err := b.r.cs.CoreV1().Pods(b.r.cfg.Namespace).Get(ctx, b.pod, metav1.GetOptions{})
	if err != nil {
		return "", wrapErr("pod "+b.pod, err)
	}
	switch p.Status.QOSClass {
	case corev1.PodQOSGuaranteed:
		return "kubepods/pod" + string(p.UID), nil
	case corev1.PodQOSBestEffort:
		return "kubepods/besteffort/pod" + string(p.UID), nil
	}
	return "kubepods/burstable/pod" + string(p.UID), nil
}
