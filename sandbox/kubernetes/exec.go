package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/client-go/util/exec"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/boxhost"
)

type execOpts struct {
	argv     []string
	stdin    io.Reader
	stdout   io.Writer // when set, stdout goes here uncapped (the export)
	maxBytes int
	// hostTimeout bounds the whole call on the host; 0 means none.
	hostTimeout time.Duration
	// onAbort runs (with a fresh context) when hostTimeout or ctx ends first.
	onAbort func(context.Context)
}

// executor streams one exec of the API server: WebSocket (which carries a
// stdin close), falling back to SPDY on servers without it.
func (r *Runtime) executor(pod string, o execOpts) (remotecommand.Executor, error) {
	req := r.cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(r.cfg.Namespace).Name(pod).
		SubResource("exec").VersionedParams(&corev1.PodExecOptions{
		Container: "box", Command: o.argv, Stdin: o.stdin != nil, Stdout: true, Stderr: true,
	}, scheme.ParameterCodec)
	ws, err := remotecommand.NewWebSocketExecutor(r.rest, "GET", req.URL().String())
	if err != nil {
		return nil, fmt.Errorf("exec in %s: %w", pod, err)
	}
	spdy, err := remotecommand.NewSPDYExecutor(r.rest, "POST", req.URL())
	if err != nil {
		return nil, fmt.Errorf("exec in %s: %w", pod, err)
	}
	return remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
}

// execRaw runs argv in a pod's box container and collects capped output.
func (r *Runtime) execRaw(ctx context.Context, pod string, o execOpts) (sandbox.ExecResult, error) {
	start := time.Now()
	ex, err := r.executor(pod, o)
	if err != nil {
		return sandbox.ExecResult{}, err
	}
	stdout := &boxhost.CapWriter{Max: o.maxBytes}
	stderr := &boxhost.CapWriter{Max: o.maxBytes}
	var out io.Writer = stdout
	if o.stdout != nil {
		out = o.stdout
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- ex.StreamWithContext(sctx, remotecommand.StreamOptions{Stdin: o.stdin, Stdout: out, Stderr: stderr})
	}()
	end := boxhost.AwaitStream(ctx, done, o.hostTimeout, 10*time.Second, o.onAbort, cancel)
	streamErr := end.Err
	res := sandbox.ExecResult{TimedOut: end.TimedOut, Stdout: stdout.Bytes(), Stderr: stderr.Bytes(),
		Truncated: stdout.Truncated() || stderr.Truncated(), Duration: time.Since(start)}
	switch {
	case res.TimedOut:
		res.ExitCode = -1
		return res, nil
	case end.Aborted:
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return res, fmt.Errorf("exec in %s: %w", pod, errors.Join(ctx.Err(), sandbox.ErrTimeout))
		}
		return res, fmt.Errorf("exec in %s: %w", pod, ctx.Err())
	}
	var ee utilexec.ExitError
	if errors.As(streamErr, &ee) && ee.Exited() {
		res.ExitCode = ee.ExitStatus()
		return res, nil
	}
	if streamErr != nil {
		return res, r.execErr(ctx, pod, streamErr)
	}
	return res, nil
}

// execErr classifies a stream that failed: a pod that is gone or no longer
// running is ErrNotFound, anything else the API server's unavailability.
func (r *Runtime) execErr(ctx context.Context, pod string, err error) error {
	p, gerr := r.cs.CoreV1().Pods(r.cfg.Namespace).Get(context.WithoutCancel(ctx), pod, metav1.GetOptions{})
	if apierrors.IsNotFound(gerr) || (gerr == nil && (p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning)) {
		return fmt.Errorf("exec in %s: the pod is gone: %v: %w", pod, err, sandbox.ErrNotFound)
	}
	var st apierrors.APIStatus
	if errors.As(err, &st) && st.Status().Code == http.StatusNotFound {
		return fmt.Errorf("exec in %s: %w: %w", pod, err, sandbox.ErrNotFound)
	}
	if strings.Contains(err.Error(), "container not found") || strings.Contains(err.Error(), "not running") {
		return fmt.Errorf("exec in %s: %w: %w", pod, err, sandbox.ErrNotFound)
	}
	return fmt.Errorf("exec in %s: %w: %w", pod, err, sandbox.ErrUnavailable)
}
