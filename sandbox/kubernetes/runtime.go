package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/mass-dev/mass/sandbox"
)

// AnnotationRuntimeVersion on a RuntimeClass says which runtime version its
// handler runs (scripts/k8s-local.sh sets it from `runsc --version`); the
// API has no field for it.
const AnnotationRuntimeVersion = "mass.dev/runtime-version"

// Runtime is sandbox.Runtime on a Kubernetes cluster.
type Runtime struct {
	cfg  Config
	rest *rest.Config
	cs   kubernetes.Interface
	log  *slog.Logger
	// runtime is what sandbox.RuntimeAuto resolved to when the runtime opened.
	runtime, runtimeChoice, runtimeNote string
	// capacity admits episodes by the boxes they reserve; nil: no cap.
	capacity *capacity
}

var _ sandbox.Runtime = (*Runtime)(nil)

// New connects to the cluster, checks the namespace and resolves the
// policy's runtime (auto: gVisor when its RuntimeClass exists).
func New(ctx context.Context, cfg Config) (*Runtime, error) {
	cfg = cfg.withDefaults()
	if cfg.DaemonID == "" || !dnsLabel.MatchString(cfg.DaemonID) {
		return nil, fmt.Errorf("kubernetes sandbox: daemon id %q must be a DNS label: %w", cfg.DaemonID, sandbox.ErrInvalid)
	}
	rc, err := restConfig(cfg.Kubeconfig)
	if err != nil {
		return nil, err
	}
	// The API server's warnings (Pod Security "restricted" would refuse the
	// keeper's capabilities and the hostPath) go to the log, not stderr.
	rc.WarningHandler = apiWarnings{cfg.Logger.With("sandbox", "kubernetes")}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	r := &Runtime{cfg: cfg, rest: rc, cs: cs, log: cfg.Logger.With("sandbox", "kubernetes")}
	if cfg.MaxBoxes >= 0 {
		r.capacity = newCapacity(cfg.MaxBoxes)
	}
	if _, err := cs.CoreV1().Namespaces().Get(ctx, cfg.Namespace, metav1.GetOptions{}); err != nil {
		return nil, wrapErr("namespace "+cfg.Namespace, err)
	}
	if err := r.resolveRuntime(ctx); err != nil {
		return nil, err
	}
	r.cfg.Policy.Runtime = r.policyRuntime(r.cfg.Policy.Runtime)
	return r, nil
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	var rc *rest.Config
	var err error
	if kubeconfig == "" {
		rc, err = rest.InClusterConfig()
	} else {
		rc, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
	}
	if err != nil {
		return nil, fmt.Errorf("kubernetes config %q: %v: %w", kubeconfig, err, sandbox.ErrUnavailable)
	}
	rc.QPS, rc.Burst = 50, 100
	return rc, nil
}

var getenv = os.Getenv

// resolveRuntime decides what RuntimeAuto means: RuntimeEnv when set, else
// runsc when the gVisor RuntimeClass exists, else runc with a note.
func (r *Runtime) resolveRuntime(ctx context.Context) error {
	has, err := r.hasClass(ctx, r.cfg.RuntimeClass)
	if err != nil {
		return err
	}
	switch pinned := getenv(sandbox.RuntimeEnv); {
	case pinned == sandbox.RuntimeRunc || pinned == sandbox.RuntimeRunsc:
		r.runtime, r.runtimeChoice = pinned, "pinned by $"+sandbox.RuntimeEnv
	case has:
		r.runtime, r.runtimeChoice = sandbox.RuntimeRunsc, "auto: RuntimeClass "+r.cfg.RuntimeClass+" exists"
	default:
		r.runtime, r.runtimeChoice = sandbox.RuntimeRunc, "auto: no RuntimeClass "+r.cfg.RuntimeClass
		r.runtimeNote = "RuntimeClass " + r.cfg.RuntimeClass + " is missing: boxes run on runc, not gVisor"
	}
	return nil
}

func (r *Runtime) hasClass(ctx context.Context, name string) (bool, error) {
	_, err := r.cs.NodeV1().RuntimeClasses().Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, wrapErr("runtime class "+name, err)
	}
	return true, nil
}

func (r *Runtime) policyRuntime(rt string) string {
	if rt == "" || rt == sandbox.RuntimeAuto {
		return r.runtime
	}
	return rt
}

// runtimeClass is the RuntimeClass of a resolved OCI runtime name.
func (r *Runtime) runtimeClass(rt string) (string, error) {
	switch rt {
	case sandbox.RuntimeRunsc:
		return r.cfg.RuntimeClass, nil
	case sandbox.RuntimeRunc:
		return r.cfg.RuncClass, nil
	}
	return "", fmt.Errorf("kubernetes: OCI runtime %q: %w", rt, sandbox.ErrInvalid)
}

// Name implements sandbox.Runtime.
func (r *Runtime) Name() string { return "kubernetes" }

// Close implements sandbox.Runtime; the client holds nothing to release.
func (r *Runtime) Close() error { return nil }

// Report implements sandbox.Runtime: the policy and the cluster facts.
func (r *Runtime) Report(ctx context.Context) (sandbox.Report, error) {
	v, err := r.cs.Discovery().ServerVersion()
	if err != nil {
		return sandbox.Report{}, wrapErr("server version", err)
	}
	rep := sandbox.Report{
		Policy:        r.cfg.Policy,
		Engine:        fmt.Sprintf("kubernetes %s (namespace %s)", v.GitVersion, r.cfg.Namespace),
		RuntimeChoice: r.runtimeChoice,
		DiskCapEnforced: "not enforced by the node: the workspace is a hostPath directory on the episode's node " +
			"(the ephemeral-storage limit covers each box's writable layer, /tmp counts toward its memory limit)",
	}
	classes, err := r.cs.NodeV1().RuntimeClasses().List(ctx, metav1.ListOptions{})
	if err != nil {
		return rep, wrapErr("runtime classes", err)
	}
	for _, c := range classes.Items {
		rep.Runtimes = append(rep.Runtimes, c.Name+"="+c.Handler)
		if c.Name == r.cfg.RuntimeClass {
			rep.GVisor = true
			if rep.Policy.Runtime == sandbox.RuntimeRunsc {
				rep.RuntimePath = "RuntimeClass " + c.Name + " (handler " + c.Handler + ")"
				rep.RuntimeVersion = c.Annotations[AnnotationRuntimeVersion]
			}
		}
	}
	sort.Strings(rep.Runtimes)
	if err := r.nodeFacts(ctx, &rep); err != nil {
		return rep, err
	}
	if r.runtimeNote != "" {
		rep.Warnings = append(rep.Warnings, r.runtimeNote)
	}
	for _, w := range r.cfg.Policy.Weaknesses() {
		rep.Warnings = append(rep.Warnings, "policy weaker than default: "+w)
	}
	rep.Warnings = append(rep.Warnings,
		"the pids cap is the nodes' kubelet podPidsLimit, not the policy's pids_limit",
		"no network: boxes are meant for nodes whose CNI gives pods no route; on a cluster with an enforcing CNI add a deny-all NetworkPolicy (SECURITY.md)")
	return rep, nil
}

// nodeFacts fills kernel and runtime versions from the schedulable nodes.
func (r *Runtime) nodeFacts(ctx context.Context, rep *sandbox.Report) error {
	nodes, err := r.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return wrapErr("nodes", err)
	}
	for _, n := range nodes.Items {
		ni := n.Status.NodeInfo
		rep.KernelVersion = ni.KernelVersion
		rep.RuncVersion = ni.ContainerRuntimeVersion
		rep.Engine += fmt.Sprintf("; node %s kubelet %s %s", n.Name, ni.KubeletVersion, ni.ContainerRuntimeVersion)
	}
	if len(nodes.Items) == 0 {
		rep.Warnings = append(rep.Warnings, "the cluster has no nodes")
	}
	return nil
}

// wrapErr maps API errors to the sandbox classes.
func wrapErr(what string, err error) error {
	if err == nil {
		return nil
	}
	var st apierrors.APIStatus
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Errorf("%s: %w: %w", what, err, sandbox.ErrNotFound)
	case apierrors.IsAlreadyExists(err):
		return fmt.Errorf("%s: %w: %w", what, err, sandbox.ErrInvalid)
	case apierrors.IsInvalid(err) || apierrors.IsBadRequest(err):
		return fmt.Errorf("%s: %w: %w", what, err, sandbox.ErrInvalid)
	case apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err):
		return fmt.Errorf("%s: %w: %w", what, err, sandbox.ErrDenied)
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s: %w", what, err)
	case errors.As(err, &st) && st.Status().Code == http.StatusTooManyRequests:
		return fmt.Errorf("%s: %w: %w", what, err, sandbox.ErrUnavailable)
	}
	return fmt.Errorf("%s: %w: %w", what, err, sandbox.ErrUnavailable)
}

// apiWarnings logs the API server's warning headers at debug level.
type apiWarnings struct{ log *slog.Logger }

func (w apiWarnings) HandleWarningHeader(code int, agent, text string) {
	w.log.Debug("kubernetes API warning", "code", code, "text", text)
}
