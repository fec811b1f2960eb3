package daemon_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/mass-dev/mass/cycle/search"
	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/sandbox"
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
