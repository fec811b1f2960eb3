package daemon_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mass-dev/mass/agents/episode"
	"github.com/mass-dev/mass/cycle/generation"
	"github.com/mass-dev/mass/cycle/workflow"
	"github.com/mass-dev/mass/daemon/api"
)

// refFixture writes a reference-layout task set of four synthetic tasks
// (quant 7 and 64, pharmacy 215, robotics 330) in the reference's format:
// bare/query{q}.txt, initial/query{q}_ourTeam.txt (task, design, trailer),
// splits.json and teacher_directive.txt. It returns the tasks/ folder and
// the directive.
func refFixture(t *testing.T) (string, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tasks")
	for _, d := range []string{"bare", "initial"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(rel, content string) {
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tasks := map[int]string{
		7:   "Backtest a moving-average crossover on a synthetic price series of 300 days and report its Sharpe ratio.\\n\\nDeliverables:\\n1) report.md\\n2) results/metrics.json",
		64:  "Estimate the volatility of a synthetic return series with an EWMA and report the half-life used.",
		215: "Fit a two-compartment pharmacokinetic model to 40 synthetic plasma samples and report the clearance.",
		330: "Simulate a point mass pushed across a plane for 200 steps and report the final position error.",
	}
	for q, text := range tasks {
		write(fmt.Sprintf("bare/query%d.txt", q), text)
		write(fmt.Sprintf("initial/query%d_ourTeam.txt", q), text+"\n\nCreate an agent team with following agent candidates to solve this problem: \n[\n"+
			"  {\"agent_id\": \"agent_orchestrator\", \"role\": \"Coordinator\", \"instruction\": \"Split the study into stages and check every artifact.\"},\n"+
			fmt.Sprintf("  {\"agent_id\": \"agent_worker_%d\", \"role\": \"Analyst\", \"instruction\": \"Write and run the code of your stage under /workspace; return the files and numbers.\"}\n]\n\n", q)+
			"Keep a history log in logs.txt.\nIn logs.txt, Document all created and spawned agents, the hand-offs between them, and which ones ran. ")
	}
	write("splits.json", `{"designated_train": [7, 215, 330], "test": [64], "sft_train": [7, 215],
 "excluded_from_teacher_collection": {"330": "fixture: its search never beat the reference"}}`)
	directive := "## Execution requirements (fixture)\n\n1. Delegate every non-orchestrator role to its own sub-agent.\n2. Verify each returned artifact before using it.\n"
	write("teacher_directive.txt", directive)
	return dir, directive
}

// Issue 32: a reference-layout fixture of four tasks imports into specs
// that massd accepts, and a scripted cycle (one generation, tiny sizes)
// runs through the massd binary on the two sft_train tasks: each search
// starts from the imported design as v0, and every collection episode's
// teacher prompt carries the imported directive byte for byte.
func TestCycleOnImportedReferenceTasks(t *testing.T) {
	needAgentImage(t)
	bin := buildBinaries(t)
	cmd := exec.Command("go", "build", "-o", bin+"/", "./cmd/mass-train")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build mass-train: %v\n%s", err, out)
	}
	r := newRigYAML(t, fmt.Sprintf("trainer:\n  binary: %s\n  cuda_binary: \"\"\n", filepath.Join(bin, "mass-train")), "mass-agent:latest")
	ref, directive := refFixture(t)
	out := filepath.Join(t.TempDir(), "imported")
	if o, err := r.massctl("task", "import-reference", ref, "--out", out, "--episode-wall-time", "10m", "--agent-turns", "60"); err != nil {
		t.Fatalf("import: %v %s", err, o)
	}
	for _, q := range []string{"query7", "query64", "query215", "query330"} {
		if o, err := r.massctl("task", "add", filepath.Join(out, q, "task.yaml")); err != nil {
			t.Fatalf("task add %s: %v %s", q, err, o)
		}
	}
	o, err := r.massctl("cycle", "run", "--detach", "--tasks", "query7,query215", "--model", "scripted", "--generations", "1",
		"--search-iterations", "1", "--episodes", "4", "--min-success", "4", "--cap", "6", "--opponents", "2",
		"--train", "3", "--val", "1", "--train-steps", "2", "--seed", "11")
	if err != nil {
		t.Fatal(err)
	}
	id := string(bytes.TrimSpace(o))
	start := time.Now()
	j := r.waitJob(id, 25*time.Minute)
	t.Logf("cycle %s: %s in %s", id, j.State, time.Since(start).Round(time.Second))
	if j.State != api.StateSucceeded {
		show, _ := r.massctl("generation", "list")
		var why []string
		for _, task := range []string{"query7", "query215"} {
			b, _ := os.ReadFile(filepath.Join(r.data, "generations", "1", "collect", task, "outcome.json"))
			why = append(why, string(b))
		}
		t.Fatalf("cycle %s: %s (%s)\n%s\n%s", id, j.State, j.Error, show, strings.Join(why, "\n"))
	}
	g := readJSON[generation.Summary](t, filepath.Join(r.data, "generations", "1", generation.SummaryFile))
	for _, task := range []string{"query7", "query215"} {
		checkImportedSearch(t, r, out, task)
		checkImportedCollection(t, r, g, task, directive)
	}
}

// checkImportedSearch wants the task's search to have started from the
// imported workflow.txt as v0: the same agents, roles and instructions
// (the search stores its versions rendered canonically).
func checkImportedSearch(t *testing.T, r *searchRig, imported, task string) {
	t.Helper()
	want, err := os.ReadFile(filepath.Join(imported, task, "workflow.txt"))
	if err != nil {
		t.Fatal(err)
	}
	matches, _ := filepath.Glob(filepath.Join(r.data, "search", task, "*", "versions", "multi_agent_design_v0.txt"))
	if len(matches) == 0 {
		t.Fatalf("%s: no search v0 under %s", task, filepath.Join(r.data, "search", task))
	}
	for _, m := range matches {
		got, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		gw, err1 := workflow.Parse(string(got))
		ww, err2 := workflow.Parse(string(want))
		if err1 != nil || err2 != nil || len(ww.Agents) != 2 || !reflect.DeepEqual(gw.Agents, ww.Agents) {
			t.Errorf("%s v0 = %q (%v), want the imported design %q (%v)", task, got, err1, want, err2)
		}
	}
}

// checkImportedCollection wants every collection episode of the task to
// carry the imported directive verbatim in its teacher prompt.
func checkImportedCollection(t *testing.T, r *searchRig, g generation.Summary, task, directive string) {
	t.Helper()
	slots := readJSON[[]generation.Slot[generation.EpisodeResult]](t, filepath.Join(g.Dir, "collect", task, "episodes.json"))
	if len(slots) < 4 {
		t.Fatalf("%s: %d collection episodes, want 4", task, len(slots))
	}
	for _, s := range slots {
		if s.Result == nil || s.Result.EpisodeID == "" {
			t.Errorf("%s slot %s has no episode", task, s.Name)
			continue
		}
		info := readJSON[episode.Info](t, filepath.Join(r.data, "episodes", s.Result.EpisodeID, episode.EpisodeFile))
		if !strings.Contains(info.TeacherPrompt, directive) || info.Workflow == "" {
			t.Errorf("%s episode %s: teacher prompt lacks the imported directive (workflow %d bytes):\n%s", task, s.Result.EpisodeID, len(info.Workflow), info.TeacherPrompt)
		}
	}
}
