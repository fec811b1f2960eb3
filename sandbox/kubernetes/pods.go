package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/boxhost"
)

// startPod creates pod and waits until its container runs. A 429, a server
// timeout and an exhausted ResourceQuota are retried with backoff, and a
// Pending pod (no capacity yet) is waited for, each logged as it lasts, up
// to StartTimeout; a pod that cannot start (image missing, a failed
// sandbox) is deleted and reported.
func (r *Runtime) startPod(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.StartTimeout)
	defer cancel()
	if err := r.createPod(ctx, pod); err != nil {
		return nil, err
	}
	got, err := r.waitRunning(ctx, pod.Name)
	if err != nil {
		_ = r.deletePod(context.WithoutCancel(ctx), pod.Name, false)
		return nil, err
	}
	return got, nil
}

// createPod creates pod, retrying with backoff (the server's Retry-After
// when it gives one) while capacityWait says the refusal is for now.
func (r *Runtime) createPod(ctx context.Context, pod *corev1.Pod) error {
	pods := r.cs.CoreV1().Pods(r.cfg.Namespace)
	wl := newWaitLog(0)
	delay := 200 * time.Millisecond
	for {
		_, err := pods.Create(ctx, pod, metav1.CreateOptions{})
		if err == nil {
			return nil
		}
		why, ok := capacityWait(err)
		if !ok {
			return wrapErr("create pod "+pod.Name, err)
		}
		if wl.due() {
			r.log.Info("waiting to create a pod", "pod", pod.Name, "agent", pod.Annotations["mass.dev/agent"],
				"waited", wl.waited(), "reason", why)
		}
		wait := delay
		if s, ok := apierrors.SuggestsClientDelay(err); ok && s > 0 {
			wait = time.Duration(s) * time.Second
		}
		if serr := sleepCtx(ctx, wait); serr != nil {
			return fmt.Errorf("create pod %s: still refused after %s (%s): %w", pod.Name,
				wl.waited(), why, errors.Join(serr, sandbox.ErrTimeout))
		}
		delay = min(delay*2, 10*time.Second)
	}
}

// waitRunning polls the pod until its container runs, logging a pod that
// stays Pending (the scheduler's reason: no node has room yet).
func (r *Runtime) waitRunning(ctx context.Context, name string) (*corev1.Pod, error) {
	pods := r.cs.CoreV1().Pods(r.cfg.Namespace)
	delay := 20 * time.Millisecond
	wl := newWaitLog(2 * time.Second)
	for {
		p, err := pods.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, wrapErr("pod "+name, err)
		}
		switch p.Status.Phase {
		case corev1.PodRunning:
			if len(p.Status.ContainerStatuses) > 0 && p.Status.ContainerStatuses[0].State.Running != nil {
				return p, nil
			}
		case corev1.PodFailed, corev1.PodSucceeded:
			return nil, fmt.Errorf("pod %s ended (%s): %s: %w", name, p.Status.Phase, podWhy(p), sandbox.ErrUnavailable)
		}
		if why := stuck(p); why != "" {
			return nil, fmt.Errorf("pod %s cannot start: %s: %w", name, why, sandbox.ErrUnavailable)
		}
		if wl.due() {
			r.log.Info("waiting for a pod to run", "pod", name, "agent", p.Annotations["mass.dev/agent"], "phase", p.Status.Phase,
				"waited", wl.waited(), "reason", podWhy(p))
		}
		if err := sleepCtx(ctx, delay); err != nil {
			return nil, fmt.Errorf("pod %s not running after %s (%s: %s): %w", name, wl.waited(),
				p.Status.Phase, podWhy(p), sandbox.ErrTimeout)
		}
		delay = min(delay*2, 500*time.Millisecond)
	}
}

// stuck names a waiting reason that will not resolve by waiting.
func stuck(p *corev1.Pod) string {
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil {
			switch w.Reason {
			case "ErrImageNeverPull", "InvalidImageName", "CreateContainerConfigError", "CreateContainerError", "RunContainerError":
				return w.Reason + ": " + w.Message
			}
		}
	}
	return ""
}

func podWhy(p *corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Status != corev1.ConditionTrue && c.Message != "" {
			return c.Message
		}
	}
	for _, cs := range p.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil {
			return fmt.Sprintf("exit %d %s %s", t.ExitCode, t.Reason, t.Message)
		}
		if w := cs.State.Waiting; w != nil {
			return w.Reason + " " + w.Message
		}
	}
	return p.Status.Reason + " " + p.Status.Message
}

// deletePod deletes a pod at once (grace 0); with wait it returns only
// once the pod is gone. A missing pod is not an error.
func (r *Runtime) deletePod(ctx context.Context, name string, wait bool) error {
	pods := r.cs.CoreV1().Pods(r.cfg.Namespace)
	err := pods.Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(0))})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return wrapErr("delete pod "+name, err)
	}
	if !wait {
		return nil
	}
	delay := 20 * time.Millisecond
	for {
		_, err := pods.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err := sleepCtx(ctx, delay); err != nil {
			return fmt.Errorf("pod %s not gone: %w", name, err)
		}
		delay = min(delay*2, 250*time.Millisecond)
	}
}

// listPods lists this daemon's pods, of one episode and kind or all.
func (r *Runtime) listPods(ctx context.Context, episode, kind string) ([]corev1.Pod, error) {
	sel := labels.Set{boxhost.LabelDaemon: r.cfg.DaemonID}
	if episode != "" {
		sel[boxhost.LabelEpisode] = episode
	}
	if kind != "" {
		sel[boxhost.LabelKind] = kind
	}
	l, err := r.cs.CoreV1().Pods(r.cfg.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil, wrapErr("list pods", err)
	}
	return l.Items, nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
