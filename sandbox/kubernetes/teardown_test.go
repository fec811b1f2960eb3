package kubernetes

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/boxhost"
	"github.com/mass-dev/mass/sandbox/sandboxtest"
)

// nodeProc is a process on the node that belongs to a pod.
type nodeProc struct {
	pid  int
	argv string
}

// podProcs lists the node's processes in the cgroup of pod uid: the
// kubelet puts each pod in a cgroup named pod<uid>, and runsc puts its
// sandbox and gofers in the cgroups of the pod's containers. It reads
// this machine's /proc, so it sees the node only where the node is this
// machine ($MASS_K8S_NODE_PROC=1, scripts/k8s-local.sh's cluster).
func podProcs(t *testing.T, uid string) []nodeProc {
	t.Helper()
	dirs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		t.Fatal(err)
	}
	var out []nodeProc
	for _, d := range dirs {
		cg, err := os.ReadFile(filepath.Join(d, "cgroup"))
		if err != nil || !strings.Contains(string(cg), "pod"+uid) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(d))
		cmd, _ := os.ReadFile(filepath.Join(d, "cmdline"))
		argv := strings.Fields(strings.ReplaceAll(string(cmd), "\x00", " "))
		name := "?"
		if len(argv) > 0 {
			name = argv[0]
		}
		out = append(out, nodeProc{pid: pid, argv: name})
	}
	return out
}

func countRunsc(ps []nodeProc) (sandboxes, gofers int) {
	for _, p := range ps {
		switch filepath.Base(p.argv) {
		case "runsc-sandbox":
			sandboxes++
		case "runsc-gofer":
			gofers++
		}
	}
	return
}

// TestDeletedPodLeavesNoSandbox is the teardown probe of pods: an
// episode's keeper and agent pods run (the agent after an exec), both are
// deleted, and within a minute no process of either pod may remain on the
// node — no runsc-sandbox, no runsc-gofer, nothing in the pods' cgroups. Before runsc-mass's waiter
// (scripts/k8s-local.sh) every deleted gVisor pod left its sandbox and
// gofers behind.
func TestDeletedPodLeavesNoSandbox(t *testing.T) {
	if os.Getenv("MASS_K8S_NODE_PROC") != "1" {
		t.Skip("NODE NOT LOCAL: $MASS_K8S_NODE_PROC=1 says the cluster's node is this machine (scripts/k8s-local.sh; make k8s-test sets it): the teardown probe is SKIPPED")
	}
	for _, rtName := range []string{sandbox.RuntimeRunsc, sandbox.RuntimeRunc} {
		t.Run(rtName, func(t *testing.T) { deletedPodLeavesNothing(t, rtName) })
	}
}

func deletedPodLeavesNothing(t *testing.T, runtime string) {
	p := testPolicy(runtime)
	rt := clusterRuntime(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	ep := sandboxtest.Episode(t)
	if err := rt.CreateWorkspace(ctx, sandbox.WorkspaceSpec{Episode: ep}, nil); err != nil {
		t.Fatal(err)
	}
	sb, err := rt.Create(ctx, sandbox.Spec{Episode: ep, Agent: "a", Image: envOr("MASS_K8S_TEST_IMAGE", "mass-test-k8s:latest"), Policy: p})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := sb.Exec(ctx, sandbox.ExecRequest{Argv: []string{"sh", "-c", "echo started"}}); err != nil || res.ExitCode != 0 {
		t.Fatalf("exec: %+v %v", res, err)
	}
	pods, err := rt.listPods(ctx, ep, "")
	if err != nil || len(pods) != 2 {
		t.Fatalf("pods of %s: %d %v, want keeper and agent", ep, len(pods), err)
	}
	uids := map[string]string{}
	for _, pod := range pods {
		uids[pod.Name] = string(pod.UID)
		ps := podProcs(t, string(pod.UID))
		s, g := countRunsc(ps)
		t.Logf("pod %s (%s, uid %s) running: %d processes on the node, %d runsc-sandbox, %d runsc-gofer", pod.Name, pod.Labels[boxhost.LabelKind], pod.UID, len(ps), s, g)
		if len(ps) == 0 {
			t.Fatalf("no process of running pod %s found on this machine: is the node this machine?", pod.Name)
		}
		if runtime == sandbox.RuntimeRunsc && (s != 1 || g < 1) {
			t.Errorf("running gVisor pod %s: %d runsc-sandbox and %d runsc-gofer processes, want 1 and at least 1", pod.Name, s, g)
		}
	}
	if err := sb.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	if err := rt.RemoveWorkspace(ctx, ep); err != nil {
		t.Fatal(err)
	}
	for name := range uids {
		if _, err := rt.cs.CoreV1().Pods(rt.cfg.Namespace).Get(ctx, name, metav1.GetOptions{}); err == nil {
			t.Fatalf("pod %s still in the API after removal", name)
		}
	}
	deleted := time.Now()
	deadline := deleted.Add(time.Minute)
	for {
		left := 0
		var last []nodeProc
		for _, uid := range uids {
			ps := podProcs(t, uid)
			left += len(ps)
			last = append(last, ps...)
		}
		if left == 0 {
			t.Logf("every process of the deleted pods gone %v after the API removed them", time.Since(deleted).Round(100*time.Millisecond))
			return
		}
		if time.Now().After(deadline) {
			s, g := countRunsc(last)
			t.Fatalf("%d processes of the deleted pods remain on the node a minute later (%d runsc-sandbox, %d runsc-gofer): %v", left, s, g, last)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
