package daemon_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mass-dev/mass/agents/record"
	"github.com/mass-dev/mass/cycle/judge"
	"github.com/mass-dev/mass/cycle/search"
	"github.com/mass-dev/mass/cycle/workflow"
	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/client"
	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/sandbox/docker"
	"github.com/mass-dev/mass/sandbox/image"
	"github.com/mass-dev/mass/sandbox/sandboxtest"
)

// searchRig is a real massd (Docker sandboxes, the test image) with extra
// models served by in-test fake endpoints.
type searchRig struct {
	t          *testing.T
	bin, tmp   string
	data, sock string
	conf       string
	cmd        *exec.Cmd
	log        bytes.Buffer
	cl         *client.Client
}

func newSearchRig(t *testing.T, models map[string]string) *searchRig {
	t.Helper()
	return newRig(t, models, image.TestRef)
}

// newGradedRig is a searchRig on the agent image, whose python3 runs the
// example tasks' graders (the busybox test image has none, so every
// graded episode there fails its grade); it skips without that image.
func newGradedRig(t *testing.T) *searchRig {
	t.Helper()
	needAgentImage(t)
	return newRig(t, nil, image.AgentRef)
}

// needAgentImage skips the test without Docker or without the agent image.
func needAgentImage(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds massd and runs real sandboxes")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if cli, skip, err := sandboxtest.Engine(ctx, "graded tests"); err != nil {
		t.Fatal(err)
	} else if cli == nil {
		t.Skip(skip)
	} else if _, err := cli.ImageInspect(ctx, image.AgentRef); err != nil {
		t.Skipf("agent image %s missing (massctl image build --all): %v", image.AgentRef, err)
	}
}

func newRig(t *testing.T, models map[string]string, img string) *searchRig {
	t.Helper()
	var conf string
	if len(models) > 0 {
		conf += "models:\n"
		for name, url := range models {
			conf += fmt.Sprintf("  %s:\n    base_url: %s\n    model: %s-model\n", name, url, name)
		}
	}
	return newRigYAML(t, conf, img)
}

// newRigYAML is a searchRig whose massd.yaml ends with extra (a models
// section, say).
func newRigYAML(t *testing.T, extra string, img string) *searchRig {
	t.Helper()
	if testing.Short() {
		t.Skip("builds massd and runs real sandboxes")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if cli, skip, err := sandboxtest.Engine(ctx, "search tests"); err != nil {
		t.Fatal(err)
	} else if cli == nil {
		t.Skip(skip)
	}
	bin := buildBinaries(t)
	helper := filepath.Join(bin, "mass-sandbox-helper")
	if _, err := os.Stat(helper); err != nil {
		cmd := exec.Command("go", "build", "-o", bin+"/", "./sandbox/helper/cmd/mass-sandbox-helper")
		cmd.Dir, cmd.Env = "..", append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build helper: %v\n%s", err, out)
		}
	}
	tmp := t.TempDir()
	r := &searchRig{t: t, bin: bin, tmp: tmp, data: filepath.Join(tmp, "data"), sock: filepath.Join(tmp, "massd.sock")}
	conf := fmt.Sprintf("socket: %s\ndata_dir: %s\njobs:\n  concurrency: 2\nsandbox:\n  image: %s\n  helper: %s\n", r.sock, r.data, img, helper) + extra
	r.conf = filepath.Join(tmp, "massd.yaml")
	if err := os.WriteFile(r.conf, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	r.cl = client.New(r.sock)
	t.Cleanup(func() {
		r.stop(true)
		if rt, err := docker.New(context.Background(), docker.Config{DaemonID: datadir.New(r.data).SandboxDaemonID(), HelperPath: helper}); err == nil {
			rt.ReapOrphans(context.Background(), func(string) bool { return false })
			rt.Close()
		}
		if t.Failed() {
			t.Logf("massd log:\n%s", r.log.String())
		}
	})
	r.start()
	return r
}

func (r *searchRig) start() {
	r.t.Helper()
	r.cmd = exec.Command(filepath.Join(r.bin, "massd"), "--config", r.conf)
	r.cmd.Stdout, r.cmd.Stderr = &r.log, &r.log
	r.cmd.Env = append(os.Environ(), "MASS_CONFIG=")
	if err := r.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	for i := 0; ; i++ {
		if _, err := r.cl.Health(context.Background()); err == nil {
			return
		}
		if i > 150 {
			r.t.Fatalf("massd did not come up:\n%s", r.log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (r *searchRig) stop(kill bool) {
	if r.cmd == nil || r.cmd.ProcessState != nil {
		return
	}
	if kill {
		r.cmd.Process.Kill()
	} else {
		r.cmd.Process.Signal(os.Interrupt)
	}
	r.cmd.Wait()
}

func (r *searchRig) massctl(args ...string) ([]byte, error) {
	cmd := exec.Command(filepath.Join(r.bin, "massctl"), append([]string{"--socket", r.sock}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("massctl %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
	}
	return out, nil
}

func (r *searchRig) waitJob(id string, limit time.Duration) api.Job {
	r.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		j, err := r.cl.Job(context.Background(), id)
		if err == nil && api.Terminal(j.State) && j.State != api.StateInterrupted {
			return j
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("job %s not finished after %s (state %s)", id, limit, j.State)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func readJSONL[T any](t *testing.T, p string) []T {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var out []T
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var v T
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out = append(out, v)
	}
	return out
}

func readJSON[T any](t *testing.T, p string) T {
	t.Helper()
	var v T
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	return v
}

// TestSearchScriptedThroughMassd runs `massctl search --json` for three
// iterations of the scripted model on an example task against a real
// massd, and checks every file, a champion change, beats_reference, and
// that the champion changes only after a win against it.
func TestSearchScriptedThroughMassd(t *testing.T) {
	r := newSearchRig(t, nil)
	start := time.Now()
	out, err := r.massctl("search", "--task", "../examples/tasks/sales-analysis/task.yaml", "--iterations", "3", "--seed", "0", "--model", "scripted", "--json")
	if err != nil {
		t.Fatal(err)
	}
	wall := time.Since(start)
	var sum search.Summary
	if err := json.Unmarshal(out, &sum); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var raw map[string]any
	json.Unmarshal(out, &raw)
	for _, k := range []string{"search_id", "task", "dir", "iterations", "champion_version", "beats_reference", "comparisons", "invalid_judgments"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("summary lacks %q: %s", k, out)
		}
	}
	if sum.Iterations != 3 || !sum.BeatsReference || sum.ChampionVersion == 0 || sum.InvalidJudgments != 0 || sum.Comparisons != 7 {
		t.Fatalf("summary %+v", sum)
	}
	if sum.Episodes != 5 || sum.EpisodeAttempts != 5 {
		t.Errorf("episodes %d attempts %d, want 5 and 5", sum.Episodes, sum.EpisodeAttempts)
	}
	checkSearchFiles(t, sum)
	t.Logf("3-iteration scripted search: wall %s, %d episodes, judge calls %d, optimizer calls %d, tokens %d",
		wall, sum.Episodes, sum.Calls.JudgeCalls, sum.Calls.OptimizerCalls, sum.Tokens)

	// massctl workflow reads the same files.
	if out, err := r.massctl("workflow", "champion", sum.Task); err != nil || !strings.Contains(string(out), `"beats_reference": true`) {
		t.Errorf("workflow champion: %s %v", out, err)
	}
	if out, err := r.massctl("workflow", "diff", sum.Task, "v0", "v1"); err != nil || !strings.Contains(string(out), "+") {
		t.Errorf("workflow diff: %s %v", out, err)
	}
	if out, err := r.massctl("workflow", "list", sum.Task); err != nil || !strings.Contains(string(out), "v3") {
		t.Errorf("workflow list: %s %v", out, err)
	}
}

func checkSearchFiles(t *testing.T, sum search.Summary) {
	t.Helper()
	d := sum.Dir
	for k := 0; k <= 3; k++ {
		if _, err := workflow.ParseFile(filepath.Join(d, "versions", workflow.VersionFile(k))); err != nil {
			t.Errorf("design v%d: %v", k, err)
		}
		q, err := os.ReadFile(filepath.Join(d, "updated_queries", fmt.Sprintf("%s-v%d.txt", sum.Task, k)))
		if err != nil || !strings.Contains(string(q), workflow.Header) {
			t.Errorf("updated query v%d: %v", k, err)
		}
	}
	cmps := readJSONL[search.Comparison](t, filepath.Join(d, search.ComparisonHistoryFile))
	var overhead time.Duration
	n := 0
	for _, c := range cmps {
		t.Logf("%s: %s (champion v%d, changed %v) %s", c.Key, c.Outcome, c.ChampionBefore, c.ChampionChanged, c.Rationale)
		for _, key := range c.Judgments {
			res := readJSON[judge.Result](t, filepath.Join(d, "comparisons", key, "result.json"))
			overhead += res.Duration - res.ModelTime
			n++
		}
	}
	if n > 0 {
		t.Logf("massd overhead per judgment (bundles, prompt, parse; model time excluded): %s over %d judgments", overhead/time.Duration(n), n)
	}
	champs := readJSONL[search.Comparison](t, filepath.Join(d, search.ChampionHistoryFile))
	for _, c := range append(append([]search.Comparison(nil), cmps...), champs...) {
		for _, key := range c.Judgments {
			res := readJSON[judge.Result](t, filepath.Join(d, "comparisons", key, "result.json"))
			if res.Status != judge.StatusValid || res.Rationale == "" {
				t.Errorf("judgment %s: %+v", key, res)
			}
			if p, err := os.ReadFile(filepath.Join(d, "comparisons", key, "full_prompt.txt")); err != nil || !strings.Contains(string(p), judge.Marker) {
				t.Errorf("prompt of %s: %v", key, err)
			}
		}
		if c.Winner != search.WinA && c.Winner != search.WinB && c.Winner != search.WinTie {
			t.Errorf("%s: winner %q", c.Key, c.Winner)
		}
	}
	// Rows in the reference's keys: every version against the baseline,
	// arbitrations only in the champion history.
	for i, c := range cmps {
		if want := search.BaselineKey(i); c.Key != want || c.Baseline != "no_harness" || c.VersionB != i {
			t.Errorf("history row %d: key %s (want %s) %+v", i, c.Key, want, c)
		}
	}
	for _, c := range champs {
		if c.Kind != "champion_arbitration" || c.VersionA == nil || !strings.HasPrefix(c.Key, "champion_v") {
			t.Errorf("champion row %+v", c)
		}
	}
	// The folder's own records replay to the retained workflow it wrote.
	rep, err := search.Replay(d, "")
	if err != nil || !sameVersion(rep.RetainedVersion, sum.RetainedVersion) || rep.BeatsReference != sum.BeatsReference || rep.NeedsArbitration {
		t.Errorf("replay %+v %v, summary retained %v", rep, err, sum.RetainedVersion)
	}
	checkEpisodes(t, d)
	// The optimizer never sees the grade, the guards or the audit.
	prompts, _ := filepath.Glob(filepath.Join(d, search.PromptsDir, "v*_to_v*", "full_prompt.txt"))
	for _, p := range prompts {
		b, _ := os.ReadFile(p)
		// The reference's own instructions ask for "recall/re-delegation".
		text := strings.ReplaceAll(strings.ToLower(string(b)), "re-delegation", "")
		for _, banned := range []string{"grade", "guard", "audit", "code_handoff", "delegation"} {
			if strings.Contains(text, banned) {
				t.Errorf("%s mentions %q", p, banned)
			}
		}
	}
	if len(prompts) != 3 {
		t.Errorf("%d optimizer prompts, want 3", len(prompts))
	}
	ret := readJSON[search.Retained](t, filepath.Join(d, search.RetainedFile))
	if !sameVersion(ret.Version, sum.RetainedVersion) || ret.Champion != sum.ChampionVersion || !ret.BeatsReference || ret.LastEvaluatedVersion != 3 || !ret.Finished || ret.Model == "" {
		t.Errorf("retained %+v", ret)
	}
	ptr, err := workflow.ReadPointer(filepath.Dir(d))
	if err != nil || ptr.SearchID != sum.SearchID || ptr.Version != sum.ChampionVersion {
		t.Errorf("pointer %+v %v", ptr, err)
	}
}

func sameVersion(a, b *int) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func readFileErr(p string) ([]byte, error) { return os.ReadFile(p) }

// TestSearchAgentJudgeMode runs a one-iteration search whose evaluator is a
// judge agent in its own sandboxed episode, with both workspaces mounted
// read-only; its verdicts come from what it inspected with its tools.
func TestSearchAgentJudgeMode(t *testing.T) {
	r := newSearchRig(t, nil)
	out, err := r.massctl("search", "--task", "../examples/tasks/sales-analysis/task.yaml", "--iterations", "1", "--judge-mode", "agent", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var sum search.Summary
	if err := json.Unmarshal(out, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Comparisons != 3 || sum.InvalidJudgments != 0 || sum.ChampionVersion != 1 || !sum.BeatsReference {
		t.Fatalf("summary %+v", sum)
	}
	for _, key := range []string{"v0_vs_no_harness", "v1_vs_no_harness", "champion_v0_vs_v1"} {
		res := readJSON[judge.Result](t, filepath.Join(sum.Dir, "comparisons", key, "result.json"))
		if res.Mode != "agent" || res.Status != judge.StatusValid || len(res.Episodes) != 1 || !strings.Contains(res.Rationale, "(agent mode)") {
			t.Fatalf("%s: %+v", key, res)
		}
		led, err := os.ReadFile(filepath.Join(r.data, "episodes", res.Episodes[0], "ledger.jsonl"))
		if err != nil || !strings.Contains(string(led), "/workspace/judge/") {
			t.Errorf("judge episode %s ledger: %v", res.Episodes[0], err)
		}
	}
	eps, err := r.cl.Episodes(context.Background(), client.EpisodeFilter{})
	if err != nil || len(eps) != 3+3 {
		t.Errorf("%d episodes recorded, want 3 search episodes + 3 judge episodes (%v)", len(eps), err)
	}
}

// TestSearchSeveralJudgments runs v0 against the reference with three
// judgments (three seeds, sides drawn per judgment); the majority decides.
func TestSearchSeveralJudgments(t *testing.T) {
	r := newSearchRig(t, nil)
	out, err := r.massctl("search", "--task", "../examples/tasks/sales-analysis/task.yaml", "--iterations", "0", "--judgments", "3", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var sum search.Summary
	if err := json.Unmarshal(out, &sum); err != nil {
		t.Fatal(err)
	}
	cmps := readJSONL[search.Comparison](t, filepath.Join(sum.Dir, search.ComparisonHistoryFile))
	if sum.Comparisons != 3 || len(cmps) != 1 || cmps[0].Wins != 3 || cmps[0].Outcome != search.OutcomeWin || len(cmps[0].Judgments) != 3 {
		t.Fatalf("summary %+v, comparisons %+v", sum, cmps)
	}
	seeds := map[int64]bool{}
	for _, key := range cmps[0].Judgments {
		seeds[readJSON[judge.Result](t, filepath.Join(sum.Dir, "comparisons", key, "result.json")).Seed] = true
	}
	if len(seeds) != 3 {
		t.Errorf("judgments share seeds: %v", seeds)
	}
	// Without --json massctl follows the search live.
	live, err := r.massctl("search", "--task", "sales-analysis", "--iterations", "0")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"iteration 0/0", "judging v0_vs_no_harness · iteration", "champion v0", "champion vs reference", "tokens",
		"the champion beats the reference: true", "  reference", "  v0", "outputs present"} {
		if !strings.Contains(string(live), want) {
			t.Errorf("live output lacks %q:\n%s", want, live)
		}
	}
}

// checkEpisodes checks each slot's recorded sampling seed and that v2's two
// independent checkers were delegated with two agent calls in one message.
func checkEpisodes(t *testing.T, d string) {
	t.Helper()
	var slots []search.Slot
	b, _ := os.ReadFile(filepath.Join(d, search.EpisodesFile))
	json.Unmarshal(b, &slots)
	multi := 0
	for k, sl := range slots {
		if sl.Result == nil {
			t.Fatalf("slot %s unfinished", sl.Name)
		}
		recs, err := record.ReadFile(filepath.Join(sl.Result.Dir, "api_requests.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		// Slot k (reference 0, v0 1, …) runs with seed 0·1009 + k: every call carries it.
		if s := recs[0].Request.Sampling.Seed; s == nil || *s != k {
			t.Errorf("slot %s: recorded seed %v, want %d", sl.Name, s, k)
		}
		if sl.Name != "v2" {
			continue
		}
		for _, rec := range recs {
			if rec.Response != nil && len(rec.Response.ToolCalls) >= 2 && rec.Response.ToolCalls[0].Function.Name == "agent" {
				multi++
			}
		}
	}
	if multi == 0 {
		t.Error("no orchestrator message of v2 issued several agent calls")
	}
}
