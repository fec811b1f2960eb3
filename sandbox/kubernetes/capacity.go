package kubernetes

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/mass-dev/mass/sandbox"
)

// How episodes follow the cluster's capacity. Each episode reserves
// Config.EpisodeBoxes boxes when its workspace is made and frees them when
// it is removed; an episode whose reservation does not fit waits in
// CreateWorkspace (never failing for it) until one ends. Reserving a whole
// episode at once means no episode holds a keeper while it waits for an
// agent's box that other such episodes hold: waiting cannot deadlock. An
// episode always gets in when none runs, however small the cluster.
const (
	// capacityRefresh is how long a capacity read from the cluster is kept.
	capacityRefresh = 30 * time.Second
	// progressEvery is how often a wait (for capacity, a Pending pod, a
	// quota) is logged.
	progressEvery = 15 * time.Second
)

// waitLog paces the log lines of one wait: the first once it has lasted
// after, then one every progressEvery.
type waitLog struct {
	start, last time.Time
	after       time.Duration
}

func newWaitLog(after time.Duration) *waitLog { return &waitLog{start: time.Now(), after: after} }

func (w *waitLog) due() bool {
	if time.Since(w.start) < w.after || (!w.last.IsZero() && time.Since(w.last) < progressEvery) {
		return false
	}
	w.last = time.Now()
	return true
}

func (w *waitLog) waited() time.Duration { return time.Since(w.start).Round(100 * time.Millisecond) }

// capacity is the admission of episodes by the boxes they reserve.
type capacity struct {
	mu     sync.Mutex
	held   map[string]int // episode: boxes reserved
	used   int
	limit  int       // boxes; 0: not read yet
	why    string    // where limit comes from
	readAt time.Time // when limit was read (fixed limits: never stale)
	freed  chan struct{}
}

func newCapacity(maxBoxes int) *capacity {
	c := &capacity{held: map[string]int{}, freed: make(chan struct{})}
	if maxBoxes > 0 {
		c.limit, c.why = maxBoxes, fmt.Sprintf("max_boxes %d", maxBoxes)
	}
	return c
}

// admit reserves the episode's boxes, waiting while they do not fit;
// fresh is false when the episode held them already.
func (r *Runtime) admit(ctx context.Context, episode string) (fresh bool, err error) {
	c, want := r.capacity, r.cfg.EpisodeBoxes
	if c == nil {
		return false, nil
	}
	wl := newWaitLog(0)
	for {
		if err := r.refreshCapacity(ctx); err != nil {
			return false, err
		}
		c.mu.Lock()
		if _, ok := c.held[episode]; ok {
			c.mu.Unlock()
			return false, nil
		}
		if c.used == 0 || c.used+want <= c.limit {
			c.held[episode] = want
			c.used += want
			c.mu.Unlock()
			if !wl.last.IsZero() {
				r.log.Info("cluster capacity free: episode admitted", "episode", episode, "waited", wl.waited())
			}
			return true, nil
		}
		used, limit, why, n, freed := c.used, c.limit, c.why, len(c.held), c.freed
		c.mu.Unlock()
		if wl.due() {
			r.log.Info("waiting for cluster capacity", "episode", episode, "waited", wl.waited(),
				"reserved", used, "limit", limit, "episodes", n, "source", why)
		}
		t := time.NewTimer(capacityRefresh)
		select {
		case <-ctx.Done():
			t.Stop()
			return false, fmt.Errorf("waited %s for cluster capacity (%d of %d boxes reserved by %d episodes; %s): %w",
				wl.waited(), used, limit, n, why, ctxErr(ctx))
		case <-freed:
		case <-t.C:
		}
		t.Stop()
	}
}

// release frees the episode's reservation.
func (r *Runtime) release(episode string) {
	c := r.capacity
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	n, ok := c.held[episode]
	if !ok {
		return
	}
	delete(c.held, episode)
	c.used -= n
	close(c.freed)
	c.freed = make(chan struct{})
}

// refreshCapacity reads the cluster's capacity when it follows the cluster
// and the last reading is stale.
func (r *Runtime) refreshCapacity(ctx context.Context) error {
	c := r.capacity
	c.mu.Lock()
	fresh := r.cfg.MaxBoxes > 0 || (c.limit > 0 && time.Since(c.readAt) < capacityRefresh)
	c.mu.Unlock()
	if fresh {
		return nil
	}
	n, why, err := r.clusterBoxes(ctx)
	c.mu.Lock()
	if err != nil && c.limit > 0 {
		// Keep the last reading; the next admission tries again.
		c.readAt = time.Now()
		last := c.limit
		c.mu.Unlock()
		r.log.Warn("read cluster capacity (keeping the last reading)", "boxes", last, "err", err)
		return nil
	}
	if err != nil {
		c.mu.Unlock()
		return fmt.Errorf("cluster capacity: %w", err)
	}
	if n != c.limit {
		r.log.Info("cluster capacity", "boxes", n, "episodes", max(1, n/r.cfg.EpisodeBoxes), "source", why)
	}
	c.limit, c.why, c.readAt = max(n, 1), why, time.Now()
	c.mu.Unlock()
	return nil
}

// clusterBoxes is how many boxes of the default policy the cluster holds:
// the schedulable sandbox nodes' allocatable CPU, memory and pods divided
// by one box's requests, capped by the namespace's ResourceQuotas. A
// source the daemon may not read (RBAC) is left out; with neither, there
// is no cap (math.MaxInt32).
func (r *Runtime) clusterBoxes(ctx context.Context) (int, string, error) {
	req, lim, err := r.boxResources()
	if err != nil {
		return 0, "", err
	}
	total, why := math.MaxInt32, "no readable nodes or quotas"
	nodes, err := r.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: labels.Set(r.cfg.NodeSelector).String()})
	switch {
	case apierrors.IsForbidden(err):
		nodes = &corev1.NodeList{}
	case err != nil:
		return 0, "", wrapErr("nodes", err)
	default:
		total = 0
	}
	ready := 0
	for _, n := range nodes.Items {
		if !schedulable(&n) {
			continue
		}
		ready++
		total += fits(n.Status.Allocatable, map[corev1.ResourceName]resource.Quantity{
			corev1.ResourceCPU: req[corev1.ResourceCPU], corev1.ResourceMemory: req[corev1.ResourceMemory],
			corev1.ResourcePods: *resource.NewQuantity(1, resource.DecimalSI)})
	}
	if total != math.MaxInt32 {
		why = fmt.Sprintf("allocatable of %d schedulable nodes", ready)
	}
	quotas, err := r.cs.CoreV1().ResourceQuotas(r.cfg.Namespace).List(ctx, metav1.ListOptions{})
	switch {
	case apierrors.IsForbidden(err):
		quotas = &corev1.ResourceQuotaList{}
	case err != nil:
		return 0, "", wrapErr("resource quotas", err)
	}
	per := map[corev1.ResourceName]resource.Quantity{
		corev1.ResourcePods:           *resource.NewQuantity(1, resource.DecimalSI),
		corev1.ResourceRequestsCPU:    req[corev1.ResourceCPU],
		corev1.ResourceRequestsMemory: req[corev1.ResourceMemory],
		corev1.ResourceCPU:            req[corev1.ResourceCPU],
		corev1.ResourceMemory:         req[corev1.ResourceMemory],
		corev1.ResourceLimitsCPU:      lim[corev1.ResourceCPU],
		corev1.ResourceLimitsMemory:   lim[corev1.ResourceMemory],
	}
	for _, q := range quotas.Items {
		if n := fits(q.Spec.Hard, per); n < total {
			total, why = n, "ResourceQuota "+q.Name
		}
	}
	return total, why, nil
}

// boxResources are the requests and limits of a box of the default policy.
func (r *Runtime) boxResources() (req, lim corev1.ResourceList, err error) {
	pod, err := r.podSpec(r.cfg.Policy, podOpts{name: "capacity", episode: "capacity", agent: "capacity", kind: kindAgent,
		image: r.cfg.Image, user: r.cfg.Policy.User})
	if err != nil {
		return nil, nil, err
	}
	res := pod.Spec.Containers[0].Resources
	return res.Requests, res.Limits, nil
}

// fits is how many times per fits into have, over the resources both name
// (per's zero amounts ignored); MaxInt32 when none is shared.
func fits(have corev1.ResourceList, per map[corev1.ResourceName]resource.Quantity) int {
	n := math.MaxInt32
	for name, p := range per {
		h, ok := have[name]
		if !ok || p.IsZero() {
			continue
		}
		n = min(n, int(h.MilliValue()/p.MilliValue()))
	}
	return n
}

// schedulable reports whether new pods may land on the node: Ready, not
// cordoned, no NoSchedule or NoExecute taint.
func schedulable(n *corev1.Node) bool {
	if n.Spec.Unschedulable {
		return false
	}
	for _, t := range n.Spec.Taints {
		if t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute {
			return false
		}
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// capacityWait says whether err is the API server refusing for now what
// it will take later: 429, a server timeout, a ResourceQuota exceeded.
func capacityWait(err error) (why string, ok bool) {
	switch {
	case apierrors.IsTooManyRequests(err):
		return "the API server is throttling (429)", true
	case apierrors.IsServerTimeout(err):
		return "the API server timed out", true
	case apierrors.IsForbidden(err) && strings.Contains(err.Error(), "exceeded quota"):
		return "a ResourceQuota is exhausted: " + err.Error(), true
	}
	return "", false
}

func ctxErr(ctx context.Context) error {
	if ctx.Err() == context.DeadlineExceeded {
		return fmt.Errorf("%w: %w", ctx.Err(), sandbox.ErrTimeout)
	}
	return ctx.Err()
}
