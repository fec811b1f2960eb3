package kubernetes

import (
	"bytes"
	"context"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/probe"
	"github.com/mass-dev/mass/sandbox/sandboxtest"
)

// dockerOnly are the weakenings that are Docker engine settings: massctl
// refuses them on the kubernetes backend (cli/sandbox_kubernetes.go).
var dockerOnly = []string{"readable-helper", "engine-masks"}

// TestWeakenedPoliciesFailExactly is the Docker backend's test of the same
// name on the cluster: the default policy fails exactly the probes of
// probe.KubernetesBaseline, and each weakening fails exactly those and its
// own (probe.WeakenOn, backend kubernetes). $MASS_K8S_WEAKEN_RUNTIMES
// picks the runtimes (default runsc,runc), $MASS_K8S_WEAKEN_GROUPS the
// groups whose weakenings run (default static).
func TestWeakenedPoliciesFailExactly(t *testing.T) {
	if os.Getenv("MASS_K8S_KUBECONFIG") == "" {
		t.Skip("NO CLUSTER: $MASS_K8S_KUBECONFIG is unset (scripts/k8s-local.sh up; make k8s-test): the kubernetes weakenings are SKIPPED")
	}
	bin, err := sandboxtest.BuildStatic(t.TempDir(), "github.com/mass-dev/mass/sandbox/probe/cmd/mass-probe")
	if err != nil {
		t.Fatal(err)
	}
	groups := strings.Split(envOr("MASS_K8S_WEAKEN_GROUPS", probe.GroupStatic), ",")
	for _, runtime := range strings.Split(envOr("MASS_K8S_WEAKEN_RUNTIMES", "runsc,runc"), ",") {
		t.Run(runtime, func(t *testing.T) {
			ref := testPolicy(runtime)
			rt := clusterRuntime(t, ref)
			t.Run("none", func(t *testing.T) {
				weakenedRun(t, rt, bin, ref, probe.Weakening{Name: "", Groups: []string{probe.GroupStatic}})
			})
			for _, w := range probe.Weakenings {
				if slices.Contains(dockerOnly, w.Name) || !slices.Contains(groups, w.Groups[0]) {
					continue
				}
				t.Run(w.Name, func(t *testing.T) { weakenedRun(t, rt, bin, ref, w) })
			}
		})
	}
}

func weakenedRun(t *testing.T, rt *Runtime, bin string, ref sandbox.Policy, w probe.Weakening) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	o := probe.Options{Runtime: rt, Probe: bin, Image: envOr("MASS_K8S_TEST_IMAGE", "mass-test-k8s:latest"),
		Reference: ref, Policy: ref, Groups: w.Groups, RaceOps: 50}
	var names []string
	if w.Name != "" {
		names = []string{w.Name}
	}
	wantFail, err := probe.WeakenOn(probe.BackendKubernetes, &o, names)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range probe.MootOn(probe.BackendKubernetes, ref.Runtime, names) {
		t.Logf("no hole: %s", m)
	}
	rep, err := probe.Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	base := probe.KubernetesBaseline(ref.Runtime)
	var got, baseline []string
	for _, n := range rep.Failing() {
		if _, ok := base[n]; ok && !slices.Contains(wantFail, n) {
			baseline = append(baseline, n)
			continue
		}
		got = append(got, n)
	}
	sort.Strings(got)
	var buf bytes.Buffer
	probe.WriteTable(&buf, rep)
	if !slices.Equal(got, wantFail) {
		t.Errorf("weakening %q on kubernetes/%s: failing probes = %v (+ baseline %v), want exactly %v\n%s", w.Name, ref.Runtime, got, baseline, wantFail, buf.String())
		return
	}
	t.Logf("weakening %q on kubernetes/%s: failed %v as expected (+ baseline %v); %d passed, %d failed", w.Name, ref.Runtime, got, baseline, rep.Passed, rep.Failed)
	if w.Name == "" {
		// The baseline itself: every probe it names must fail, or the
		// list claims more than the backend does.
		var want []string
		for n := range base {
			want = append(want, n)
		}
		sort.Strings(want)
		sort.Strings(baseline)
		if !slices.Equal(baseline, want) {
			t.Errorf("default policy on kubernetes/%s: baseline failures %v, probe.KubernetesBaseline names %v\n%s", ref.Runtime, baseline, want, buf.String())
		}
	}
}
