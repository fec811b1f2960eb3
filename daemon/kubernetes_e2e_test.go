package daemon_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mass-dev/mass/cycle/search"
	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/client"
	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/image"
	"github.com/mass-dev/mass/sandbox/kubernetes"
)

// The kubernetes backend through massd, on the cluster $MASS_K8S_KUBECONFIG
// names (make k8s-test); skipped loudly without one.
func newK8sRig(t *testing.T) (*searchRig, *kubernetes.Runtime) {
	t.Helper()
	kc := os.Getenv("MASS_K8S_KUBECONFIG")
	if kc == "" {
		t.Skip("NO CLUSTER: $MASS_K8S_KUBECONFIG is unset (make k8s-test): the kubernetes end-to-end tests are SKIPPED")
	}
	img := os.Getenv("MASS_K8S_TEST_IMAGE")
	if img == "" {
		img = "mass-test-k8s:latest"
	}
	extra := fmt.Sprintf("  backend: kubernetes\n  kubernetes: {kubeconfig: %s, image: %s, seccomp_localhost: %q}\n", kc, img, os.Getenv("MASS_K8S_SECCOMP"))
	r := newRigYAML(t, extra, img)
	rt, err := kubernetes.New(context.Background(), kubernetes.Config{Kubeconfig: kc, Image: img,
		DaemonID: datadir.New(r.data).SandboxDaemonID()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.ReapOrphans(context.Background(), func(string) bool { return false }) })
	return r, rt
}

func TestKubernetesSearchScripted(t *testing.T) {
	r, _ := newK8sRig(t)
	out, err := r.massctl("search", "--task", "../examples/tasks/sales-analysis/task.yaml", "--iterations", "2", "--seed", "0", "--model", "scripted", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var sum search.Summary
	if err := json.Unmarshal(out, &sum); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// checkSearchFiles assumes the Docker test's 3 iterations; the shape
	// checked here is that of a 2-iteration search.
	if sum.Iterations != 2 || sum.ChampionVersion == 0 || sum.InvalidJudgments != 0 || sum.Episodes != 4 || sum.EpisodeAttempts != 4 {
		t.Fatalf("summary %+v", sum)
	}
	t.Logf("2-iteration scripted search on kubernetes: %d episodes, %d attempts", sum.Episodes, sum.EpisodeAttempts)
}

// TestKubernetesKillNine: massd killed mid-episode; after the restart no
// pod of that episode remains and the job resumes and finishes.
func TestKubernetesKillNine(t *testing.T) {
	r, rt := newK8sRig(t)
	ctx := context.Background()
	task, err := r.cl.AddTask(ctx, "../examples/tasks/sales-analysis/task.yaml")
	if err != nil {
		t.Fatal(err)
	}
	params, _ := json.Marshal(map[string]string{"model": "scripted"})
	job, err := r.cl.SubmitJob(ctx, api.JobRequest{Kind: "episode", TaskID: task.ID, Params: params})
	if err != nil {
		t.Fatal(err)
	}
	var boxes []sandbox.Info
	deadline := time.Now().Add(3 * time.Minute)
	for len(agentsOf(boxes)) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no agent pod appeared:\n%s", r.log.String())
		}
		time.Sleep(100 * time.Millisecond)
		boxes, _ = rt.List(ctx, "")
	}
	killed := agentsOf(boxes)[0].Episode
	if err := r.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r.cmd.Wait()
	left, _ := rt.List(ctx, killed)
	t.Logf("killed massd with %d objects of episode %s alive", len(left), killed)
	r.start()
	final := r.waitJob(job.ID, 5*time.Minute)
	if final.State != api.StateSucceeded || final.Attempt < 2 {
		t.Fatalf("job %s: state %s attempt %d (%s)", job.ID, final.State, final.Attempt, final.Error)
	}
	if after, err := rt.List(ctx, killed); err != nil || len(after) != 0 {
		t.Errorf("episode %s still has %d objects after the restart: %+v (%v)", killed, len(after), after, err)
	}
	if all, err := rt.List(ctx, ""); err != nil || len(all) != 0 {
		t.Errorf("massd left %d objects: %+v (%v)", len(all), all, err)
	}
}

func agentsOf(in []sandbox.Info) []sandbox.Info {
	var out []sandbox.Info
	for _, i := range in {
		if i.Kind == "container" && i.Agent != "_workspace" {
			out = append(out, i)
		}
	}
	return out
}

// TestKubernetesAuditShape runs the same scripted episode on the Docker
// backend and on the kubernetes backend and compares what massd recorded:
// the ledger's records (agent, tool, and the keys and JSON kinds of every
// field and of its detail; not the values: hashes, times and durations
// differ) as a multiset, and the shape of the episode's audit
// (`massctl audit --json`). The backends must be indistinguishable there.
func TestKubernetesAuditShape(t *testing.T) {
	k8s, _ := newK8sRig(t)
	dock := newRigYAML(t, "", image.TestRef)
	shapes := map[string][2][]string{}
	for name, r := range map[string]*searchRig{"docker": dock, "kubernetes": k8s} {
		ledger, audit := scriptedEpisodeShape(t, r)
		shapes[name] = [2][]string{ledger, audit}
		t.Logf("%s: %d ledger records, audit shape of %d paths", name, len(ledger), len(audit))
	}
	d, k := shapes["docker"], shapes["kubernetes"]
	for i, what := range []string{"ledger", "audit"} {
		if strings.Join(d[i], "\n") != strings.Join(k[i], "\n") {
			t.Errorf("%s shapes differ:\n%s", what, shapeDiff(d[i], k[i]))
		}
	}
}

// scriptedEpisodeShape runs one scripted episode job on r and returns the
// sorted shapes of its ledger records and the shape of its audit.
func scriptedEpisodeShape(t *testing.T, r *searchRig) (ledger, audit []string) {
	t.Helper()
	ctx := context.Background()
	task, err := r.cl.AddTask(ctx, "../examples/tasks/sales-analysis/task.yaml")
	if err != nil {
		t.Fatal(err)
	}
	params, _ := json.Marshal(map[string]string{"model": "scripted"})
	job, err := r.cl.SubmitJob(ctx, api.JobRequest{Kind: "episode", TaskID: task.ID, Params: params})
	if err != nil {
		t.Fatal(err)
	}
	if final := r.waitJob(job.ID, 5*time.Minute); final.State != api.StateSucceeded {
		t.Fatalf("job %s: %s (%s)", job.ID, final.State, final.Error)
	}
	eps, err := r.cl.Episodes(ctx, client.EpisodeFilter{JobID: job.ID})
	if err != nil || len(eps) != 1 {
		t.Fatalf("episodes of job %s: %d %v", job.ID, len(eps), err)
	}
	for _, rec := range readJSONL[map[string]any](t, filepath.Join(r.data, "episodes", eps[0].ID, "ledger.jsonl")) {
		ledger = append(ledger, fmt.Sprintf("%v %v %s", rec["agent"], rec["tool"], strings.Join(jsonShape("", rec), " ")))
	}
	sort.Strings(ledger)
	out, err := r.massctl("audit", "--data-dir", r.data, "--json", eps[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	var a any
	if err := json.Unmarshal(out, &a); err != nil {
		t.Fatalf("audit JSON: %v\n%s", err, out)
	}
	return ledger, jsonShape("", a)
}

// jsonShape lists the paths of v with the JSON kind found there; an
// array's elements share the path "[]" (their shapes, deduplicated).
func jsonShape(path string, v any) []string {
	var out []string
	switch x := v.(type) {
	case map[string]any:
		out = append(out, path+":object")
		for k, e := range x {
			out = append(out, jsonShape(path+"."+k, e)...)
		}
	case []any:
		out = append(out, path+":array")
		for _, e := range x {
			out = append(out, jsonShape(path+"[]", e)...)
		}
	case string:
		out = append(out, path+":string")
	case float64:
		out = append(out, path+":number")
	case bool:
		out = append(out, path+":bool")
	case nil:
		out = append(out, path+":null")
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// shapeDiff lists the lines only one side has.
func shapeDiff(a, b []string) string {
	var sb strings.Builder
	for _, l := range a {
		if !slices.Contains(b, l) {
			fmt.Fprintf(&sb, "- docker only:     %s\n", l)
		}
	}
	for _, l := range b {
		if !slices.Contains(a, l) {
			fmt.Fprintf(&sb, "+ kubernetes only: %s\n", l)
		}
	}
	return sb.String()
}
