package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mass-dev/mass/sandbox"
)

// capped is a runtime whose capacity is fixed (no cluster is read).
func capped(maxBoxes, episodeBoxes int) *Runtime {
	cfg := Config{MaxBoxes: maxBoxes, EpisodeBoxes: episodeBoxes, DaemonID: "d1", Logger: slog.New(slog.DiscardHandler)}.withDefaults()
	return &Runtime{cfg: cfg, log: cfg.Logger, capacity: newCapacity(maxBoxes)}
}

// Two episodes of 6 boxes fit in 12; the third waits until one ends and
// then gets in; re-admitting a held episode reserves nothing more.
func TestAdmitWaitsForCapacity(t *testing.T) {
	r := capped(12, 6)
	ctx := context.Background()
	for _, ep := range []string{"e1", "e2"} {
		if fresh, err := r.admit(ctx, ep); err != nil || !fresh {
			t.Fatalf("admit %s: %v %v", ep, fresh, err)
		}
	}
	if fresh, err := r.admit(ctx, "e1"); err != nil || fresh {
		t.Errorf("re-admit e1: fresh %v err %v, want false nil", fresh, err)
	}
	got := make(chan error, 1)
	go func() {
		_, err := r.admit(ctx, "e3")
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("e3 admitted past the cap: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	r.release("e1")
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("e3 still waits after e1 ended")
	}
	r.capacity.mu.Lock()
	used := r.capacity.used
	r.capacity.mu.Unlock()
	if used != 12 {
		t.Errorf("reserved %d boxes, want 12", used)
	}
}

// The wait ends with the context, as a timeout that names the capacity.
func TestAdmitTimeout(t *testing.T) {
	r := capped(6, 6)
	if _, err := r.admit(context.Background(), "e1"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := r.admit(ctx, "e2")
	if !errors.Is(err, sandbox.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("admit past the deadline: %v, want ErrTimeout", err)
	}
	t.Log(err)
}

// An episode larger than the whole cap runs alone rather than never.
func TestAdmitAloneOverCap(t *testing.T) {
	r := capped(2, 6)
	if fresh, err := r.admit(context.Background(), "big"); err != nil || !fresh {
		t.Fatalf("admit: %v %v", fresh, err)
	}
	r.release("big")
	r.release("big") // idempotent
	if r.capacity.used != 0 {
		t.Errorf("used %d after release, want 0", r.capacity.used)
	}
}

func TestFits(t *testing.T) {
	q := resource.MustParse
	per := map[corev1.ResourceName]resource.Quantity{corev1.ResourceCPU: q("50m"), corev1.ResourceMemory: q("64Mi"), corev1.ResourcePods: q("1")}
	for _, tt := range []struct {
		have corev1.ResourceList
		want int
	}{
		{corev1.ResourceList{corev1.ResourceCPU: q("2"), corev1.ResourceMemory: q("24Gi"), corev1.ResourcePods: q("110")}, 40},
		{corev1.ResourceList{corev1.ResourceCPU: q("2"), corev1.ResourceMemory: q("256Mi"), corev1.ResourcePods: q("110")}, 4},
		{corev1.ResourceList{corev1.ResourcePods: q("3")}, 3},
		{corev1.ResourceList{"count/secrets": q("5")}, 1<<31 - 1},
	} {
		if got := fits(tt.have, per); got != tt.want {
			t.Errorf("fits(%v) = %d, want %d", tt.have, got, tt.want)
		}
	}
}

func TestCapacityWait(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{apierrors.NewTooManyRequests("slow down", 1), true},
		{apierrors.NewServerTimeout(pods, "create", 1), true},
		{apierrors.NewForbidden(pods, "p", fmt.Errorf("exceeded quota: tight, requested: pods=1, used: pods=2, limited: pods=2")), true},
		{apierrors.NewForbidden(pods, "p", fmt.Errorf("violates PodSecurity")), false},
		{apierrors.NewAlreadyExists(pods, "p"), false},
	} {
		if _, got := capacityWait(tt.err); got != tt.want {
			t.Errorf("capacityWait(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

func TestSchedulable(t *testing.T) {
	ready := corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}
	for _, tt := range []struct {
		name string
		node corev1.Node
		want bool
	}{
		{"ready", corev1.Node{Status: ready}, true},
		{"cordoned", corev1.Node{Spec: corev1.NodeSpec{Unschedulable: true}, Status: ready}, false},
		{"tainted", corev1.Node{Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}}, Status: ready}, false},
		{"not ready", corev1.Node{}, false},
	} {
		if got := schedulable(&tt.node); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}
