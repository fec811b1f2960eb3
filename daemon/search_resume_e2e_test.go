package daemon_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mass-dev/mass/agents/prompts"
	"github.com/mass-dev/mass/cycle/generation"
	"github.com/mass-dev/mass/cycle/search"
	"github.com/mass-dev/mass/generationfmt"
)

// TestSearchResumeReferenceFolder continues a search folder in the
// reference's exact layout (no config, no episodes, no retained file;
// v0 lost to the baseline, v1 tied): resumed to its own last version it
// ends with version null and beats_reference false, runs no episode and
// asks no judge; a generation then excludes the task for that reason.
// Resumed with one more iteration the scripted v2 beats the baseline and
// takes the crown outright; the folder's records replay to it, and a
// resume with another judging rule is refused naming the key.
func TestSearchResumeReferenceFolder(t *testing.T) {
	r := newSearchRig(t, nil)
	// The example task with the reference's query number and directive.
	taskDir := filepath.Join(r.tmp, "sales-analysis")
	if out, err := exec.Command("cp", "-r", "../examples/tasks/sales-analysis", taskDir).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	spec, _ := os.ReadFile(filepath.Join(taskDir, "task.yaml"))
	spec = append(spec, "reference_id: \"51\"\ndirective: teacher_directive.txt\n"...)
	os.WriteFile(filepath.Join(taskDir, "task.yaml"), spec, 0o644)
	os.WriteFile(filepath.Join(taskDir, "teacher_directive.txt"), []byte(refDirective), 0o644)
	if out, err := r.massctl("task", "add", filepath.Join(taskDir, "task.yaml")); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	dir := filepath.Join(r.data, "search", "sales-analysis", "ref1")
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-r", "../cycle/search/testdata/reference-search/query51_ourTeam", dir).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	run := func(args ...string) search.Summary {
		t.Helper()
		out, err := r.massctl(append([]string{"search", "--resume", dir, "--model", "scripted", "--judge-retries", "0", "--json"}, args...)...)
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		var sum search.Summary
		if err := json.Unmarshal(out, &sum); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return sum
	}
	sum := run("--iterations", "1")
	if sum.RetainedVersion != nil || sum.BeatsReference || sum.Episodes != 0 || sum.Calls.Judgments != 0 || sum.SearchID != "ref1" {
		t.Fatalf("resumed reference folder: %+v", sum)
	}
	ret := readJSON[search.Retained](t, filepath.Join(dir, search.RetainedFile))
	raw, _ := os.ReadFile(filepath.Join(dir, search.RetainedFile))
	if ret.Version != nil || ret.BeatsReference || !ret.Finished || !strings.Contains(string(raw), `"version": null`) {
		t.Errorf("retained %s", raw)
	}
	frozen, ok, err := search.ReadFrozen(dir)
	if err != nil || !ok || frozen.Judging != search.RuleReference || frozen.JudgeRetries != 0 || frozen.Judgments != 1 {
		t.Errorf("adopted config %+v %v %v", frozen, ok, err)
	}
	build := exec.Command("go", "build", "-o", r.bin+"/", "./cmd/mass-train")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build mass-train: %v\n%s", err, out)
	}
	out, err := r.massctl("generation", "start", "--tasks", "sales-analysis", "--model", "scripted", "--episodes", "16",
		"--min-success", "16", "--train-steps", "1", "--seed", "1", "--json")
	plan, _ := os.ReadFile(filepath.Join(r.data, "generations", "1", generationfmt.TasksFile))
	if !strings.Contains(string(plan), `"sales-analysis"`) || !strings.Contains(string(plan), "never beat the bare-task reference") ||
		!strings.Contains(fmtErr(err), "no task left to train on (1 excluded)") {
		t.Errorf("generation did not exclude the task for its search: %v\n%s\n%s", err, out, plan)
	}

	sum = run("--iterations", "2")
	if sum.RetainedVersion == nil || *sum.RetainedVersion != 2 || !sum.BeatsReference {
		t.Fatalf("continued search: %+v", sum)
	}
	// Only v2's baseline comparison: no arbitration while no champion held a win.
	if got := sum.Calls.JudgmentsPerIteration; len(got) != 3 || got[2] != 1 {
		t.Errorf("judgments per iteration %v, want [0 0 1]", got)
	}
	rep, err := search.Replay(dir, "")
	if err != nil || rep.RetainedVersion == nil || *rep.RetainedVersion != 2 || !rep.BeatsReference {
		t.Errorf("replay %+v %v", rep, err)
	}
	if out, err := r.massctl("search", "replay", dir, "--json"); err != nil || !strings.Contains(string(out), `"retained_version": 2`) {
		t.Errorf("massctl search replay: %s %v", out, err)
	}
	checkSearchPrompts(t, dir)
	checkCollectionDirective(t, r)
	out, err = r.massctl("search", "--resume", dir, "--model", "scripted", "--judge-retries", "0", "--judging", "paper", "--iterations", "2", "--json")
	if err == nil || !strings.Contains(fmtErr(err), "judging (folder reference, now paper)") {
		t.Errorf("resume with another rule: %v\n%s", err, out)
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

const refDirective = "REFERENCE DIRECTIVE: delegate every non-orchestrator role to a real sub-agent, run_in_background: false.\n"

// checkSearchPrompts: the search episodes mass ran (v1, v2) got task +
// design only, recorded under the reference's names.
func checkSearchPrompts(t *testing.T, dir string) {
	t.Helper()
	slots := readJSON[[]search.Slot](t, filepath.Join(dir, search.EpisodesFile))
	seen := 0
	for _, sl := range slots {
		if sl.Result == nil || sl.Name == "reference" {
			continue
		}
		info := readJSON[map[string]any](t, filepath.Join(sl.Result.Dir, "episode.json"))
		teacher, _ := info["teacher_prompt"].(string)
		q, err := os.ReadFile(filepath.Join(dir, "updated_queries", "query51_ourTeam-"+sl.Name+".txt"))
		if err != nil || string(q) != teacher {
			t.Errorf("%s: updated query %v differs from episode.json's teacher prompt", sl.Name, err)
		}
		if strings.Contains(teacher, "REFERENCE DIRECTIVE") || strings.Contains(teacher, prompts.Directive()) || !strings.Contains(teacher, "Create an agent team") {
			t.Errorf("%s: search episode prompt holds a directive or no design:\n%s", sl.Name, teacher)
		}
		seen++
	}
	if seen != 2 {
		t.Errorf("%d search episodes checked, want v1 and v2", seen)
	}
}

// checkCollectionDirective runs a generation's collection on the task whose
// search now beats the baseline: its teacher episodes end with the spec's
// directive file, verbatim. (On the busybox test image the python grader
// fails, so the generation stops after collection; the prompts are there.)
func checkCollectionDirective(t *testing.T, r *searchRig) {
	t.Helper()
	// The excluded generation 1 above ended; its folder goes so that a new
	// generation 1 can start.
	if err := os.RemoveAll(filepath.Join(r.data, "generations", "1")); err != nil {
		t.Fatal(err)
	}
	out, err := r.massctl("generation", "start", "--tasks", "sales-analysis", "--model", "scripted", "--episodes", "16",
		"--min-success", "16", "--cap", "16", "--train-steps", "1", "--seed", "2", "--json")
	t.Logf("generation: %v %.300s", err, out)
	infos, _ := filepath.Glob(filepath.Join(r.data, "episodes", "*", "episode.json"))
	collected := 0
	for _, p := range infos {
		info := readJSON[map[string]any](t, p)
		teacher, _ := info["teacher_prompt"].(string)
		if strings.Contains(teacher, "REFERENCE DIRECTIVE") {
			collected++
			if !strings.HasSuffix(teacher, "\n\n"+refDirective) || strings.Contains(teacher, prompts.Directive()) {
				t.Errorf("%s: collection prompt does not end with the spec's directive verbatim:\n%s", p, teacher)
			}
		}
	}
	// Collection stops early once 16 eligible are out of reach, so count
	// the episodes it ran rather than assume all 16.
	slots := readJSON[[]generation.Slot[generation.EpisodeResult]](t, filepath.Join(r.data, "generations", "1", generation.CollectDir, "sales-analysis", "episodes.json"))
	ran := 0
	for _, sl := range slots {
		ran += len(sl.Attempts)
	}
	if collected == 0 || collected != ran {
		t.Errorf("%d collection episodes carry the directive, want all %d it ran", collected, ran)
	}
}
