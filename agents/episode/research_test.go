package episode

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mass-dev/mass/agents/model/fakeopenai"
	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/docker"
	"github.com/mass-dev/mass/sandbox/egress"
	"github.com/mass-dev/mass/sandbox/image"
	"github.com/mass-dev/mass/sandbox/probe"
	"github.com/mass-dev/mass/sandbox/probe/standin"
	"github.com/mass-dev/mass/sandbox/sandboxtest"
	"github.com/mass-dev/mass/taskspec"
)

// torchLoop trains a small regression net for a few steps on the CPU.
const torchLoop = `python3 - <<'PY'
import torch
torch.manual_seed(0)
x = torch.randn(256, 8)
y = x @ torch.randn(8, 1) + 0.01 * torch.randn(256, 1)
net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
opt = torch.optim.Adam(net.parameters(), lr=0.05)
losses = []
for step in range(30):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(net(x), y)
    loss.backward()
    opt.step()
    losses.append(loss.item())
print("torch", torch.__version__, "threads", torch.get_num_threads())
print("loss_first %.5f loss_last %.5f" % (losses[0], losses[-1]))
PY`

// pipInstall makes a venv and installs the stand-in's wheel through the
// box's proxy settings (HTTP_PROXY, set by the runtime).
var pipInstall = "python3 -m venv /workspace/.venv && /workspace/.venv/bin/python -m pip install --retries 0 --timeout 20 " +
	"--index-url http://" + standin.IndexName + "/simple/ --trusted-host " + standin.IndexName + " mass-demo==0.1.0 && " +
	"/workspace/.venv/bin/python -c 'import mass_demo; print(\"answer\", mass_demo.answer())'; echo pip_exit=$?"

func shell(cmd string) fakeopenai.Call {
	b, _ := json.Marshal(map[string]string{"command": cmd})
	return fakeopenai.Call{Name: "run_shell_command", Arguments: string(b)}
}

// TestResearchBox: a task with `image: research` runs a torch training
// loop of a few steps, and pip installs a wheel from a stand-in package
// index through the episode's egress proxy when the task allows the
// index's host, and fails to when it does not; egress.jsonl and the audit
// show both. It needs mass-research:latest (`massctl image build --profile
// research`, minutes) and skips without it.
func TestResearchBox(t *testing.T) {
	needEngine(t)
	ref := sandbox.ProfileImage(sandbox.ProfileResearch)
	if _, err := testRT.Client().ImageInspect(context.Background(), ref); err != nil {
		t.Skipf("no %s (%v); build it with `sudo massctl image build --profile research`", ref, err)
	}
	rt := researchRuntime(t)
	t.Run("allowed", func(t *testing.T) {
		out, recs, dir, id := researchEpisode(t, rt, []string{standin.IndexName}, true)
		m := regexp.MustCompile(`loss_first ([0-9.]+) loss_last ([0-9.]+)`).FindStringSubmatch(out[0])
		if m == nil {
			t.Fatalf("torch loop output %q", out[0])
		}
		first, _ := strconv.ParseFloat(m[1], 64)
		last, _ := strconv.ParseFloat(m[2], 64)
		if !(last < first/4) {
			t.Errorf("torch loss %v -> %v: did not train", first, last)
		}
		if !strings.Contains(out[1], "answer 42") || !strings.Contains(out[1], "pip_exit=0") {
			t.Errorf("pip install through the proxy: %q", out[1])
		}
		if n := countHTTP(recs, true, "/packages/mass_demo-0.1.0-py3-none-any.whl"); n != 1 {
			t.Errorf("egress.jsonl: %d allowed downloads of the wheel, want 1: %+v", n, recs)
		}
		if rep := auditEpisode(t, dir, id); rep.Egress == nil || rep.Egress.Requests < 2 || rep.Egress.ByAgent["orchestrator"] < 2 {
			t.Errorf("audit egress = %+v, want the orchestrator's index requests", rep.Egress)
		}
	})
	t.Run("not allowed", func(t *testing.T) {
		out, recs, dir, id := researchEpisode(t, rt, []string{probe.StandinAllowed}, false)
		if strings.Contains(out[0], "answer 42") || strings.Contains(out[0], "pip_exit=0") {
			t.Errorf("pip installed from an index the task does not allow: %q", out[0])
		}
		if n := countHTTP(recs, false, ""); n == 0 {
			t.Errorf("egress.jsonl has no refused request to %s: %+v", standin.IndexName, recs)
		}
		if rep := auditEpisode(t, dir, id); rep.Egress == nil || rep.Egress.Denied == 0 {
			t.Errorf("audit egress = %+v, want the refused index request", rep.Egress)
		}
	})
}

// researchRuntime starts the stand-in internet with a package index of one
// wheel built here, and a runtime whose egress proxies reach only it.
func researchRuntime(t *testing.T) *docker.Runtime {
	t.Helper()
	bins := t.TempDir()
	proxy, err := sandboxtest.BuildStatic(bins, "github.com/mass-dev/mass/sandbox/egress/cmd/mass-egress-proxy")
	if err != nil {
		t.Fatal(err)
	}
	probeBin, err := sandboxtest.BuildStatic(bins, "github.com/mass-dev/mass/sandbox/probe/cmd/mass-probe")
	if err != nil {
		t.Fatal(err)
	}
	index := t.TempDir()
	if err := os.Chmod(index, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := standin.WriteWheel(index, "mass_demo", "0.1.0", map[string]string{"mass_demo/__init__.py": "def answer():\n    return 42\n"}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	daemonID := fmt.Sprintf("eptestresearch%d", os.Getpid())
	name := fmt.Sprintf("mass-test-pyindex-%d", os.Getpid())
	labels := map[string]string{docker.LabelDaemon: daemonID, docker.LabelEpisode: "standin", docker.LabelKind: "egress"}
	st, err := probe.StartStandinIndex(ctx, testRT.Client(), probeBin, image.TestRef, name, labels, index)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(context.Background()) })
	rt, err := docker.New(ctx, docker.Config{DaemonID: daemonID, HelperPath: testHelper, Image: image.TestRef, Logger: quiet,
		Client: testRT.Client(), Egress: docker.EgressConfig{ProxyPath: proxy, Network: st.Network, DNS: []string{st.Address}, AllowPrivate: true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

// researchEpisode runs one episode of a research task allowing allow; with
// torch it runs the training loop first. It returns the tool outputs in
// order, the egress records, the episode directory and id.
func researchEpisode(t *testing.T, rt *docker.Runtime, allow []string, torch bool) ([]string, []egress.Record, string, string) {
	t.Helper()
	var turns []fakeopenai.Reply
	if torch {
		turns = append(turns, calls(shell(torchLoop)))
	}
	turns = append(turns, calls(shell(pipInstall)))
	d, _ := fakeModel(t, script(turns...), nil)
	d.Runtime = rt
	spec := testTask(t, 5*time.Minute)
	spec.Image = sandbox.ProfileResearch
	spec.Limits.CPUs, spec.Limits.MemoryBytes = 2, 2<<30
	spec.Network = &taskspec.Network{Allow: allow}
	st, dir := runEpisode(t, d, spec, "")
	if !st.Success {
		t.Fatalf("episode failed: %s: %s", st.Failure, st.Reason)
	}
	var out []string
	for seq := range len(turns) {
		r := toolResults(t, dir, int64(seq+2))
		out = append(out, r[len(r)-1])
	}
	t.Logf("tool outputs:\n%s", strings.Join(out, "\n---\n"))
	f, err := os.Open(filepath.Join(dir, EgressFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := egress.ParseRecords(f)
	if err != nil {
		t.Fatal(err)
	}
	return out, recs, dir, st.EpisodeID
}

// countHTTP counts the orchestrator's HTTP requests to the index host that
// were allowed (or refused) and whose path ends with suffix.
func countHTTP(recs []egress.Record, allowed bool, suffix string) int {
	n := 0
	for _, r := range recs {
		if r.Kind == egress.KindHTTP && r.Domain == standin.IndexName && r.Allowed == allowed && r.Agent == "orchestrator" && strings.HasSuffix(r.Path, suffix) {
			n++
		}
	}
	return n
}
