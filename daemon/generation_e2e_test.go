package daemon_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mass-dev/mass/agents/model/scripted"
	"github.com/mass-dev/mass/cycle/search"
	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/generationfmt"
)

// TestGenerationScriptedThroughMassd runs a short search and then one
// generation of the scripted model on an example task against a real
// massd with real sandboxes: teacher episodes, the ring of judgments,
// Bradley–Terry, selection, a dataset of exactly the selected episodes, a
// short LoRA run on the tiny model, the adapter and merged model, and
// gen-1 registered with its parent.
func TestGenerationScriptedThroughMassd(t *testing.T) {
	r := newGradedRig(t)
	cmd := exec.Command("go", "build", "-o", r.bin+"/", "./cmd/mass-train")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build mass-train: %v\n%s", err, out)
	}
	task := "../examples/tasks/sales-analysis/task.yaml"
	out, err := r.massctl("search", "--task", task, "--iterations", "3", "--seed", "0", "--model", "scripted", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var ss search.Summary
	if err := json.Unmarshal(out, &ss); err != nil || !ss.BeatsReference {
		t.Fatalf("search: %v %s", err, out)
	}
	start := time.Now()
	// The scripted executor fails one seed in ten (its grader then fails),
	// so the task needs 18 eligible episodes and tops up to the cap of 24.
	out, err = r.massctl("generation", "start", "--tasks", ss.Task, "--model", "scripted", "--episodes", "18", "--min-success", "18",
		"--opponents", "6", "--train-steps", "1", "--seed", "1", "--json")
	if err != nil {
		show, _ := r.massctl("generation", "show", "1", "--json")
		why, _ := os.ReadFile(filepath.Join(r.data, "generations", "1", "collect", ss.Task, "outcome.json"))
		t.Fatalf("%v\n%s\n%s", err, show, why)
	}
	t.Logf("generation: %s", time.Since(start).Round(time.Second))
	var s generationfmt.Summary
	if err := json.Unmarshal(out, &s); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if s.Generation != 1 || s.Status != generationfmt.StatusDone || len(s.Tasks) != 1 {
		t.Fatalf("summary %s", out)
	}
	ts := s.Tasks[0]
	// The paper's shape: 18 eligible episodes, each meets 6 neighbours
	// (18×6/2 = 54 judgments), ranks 1–15 train and rank 16 validates.
	if ts.Episodes < 18 || ts.Successful != 18 || ts.Judgments != 54 || ts.InvalidJudgments != 0 || len(ts.Ranking) != 18 ||
		len(ts.Train) != 15 || len(ts.Val) != 1 {
		t.Errorf("task %+v", ts)
	}
	checkSelection(t, ts)
	t.Logf("%d runs, %d eligible, %d judgments (%d invalid)", ts.Episodes, ts.Successful, ts.Judgments, ts.InvalidJudgments)
	tau, n := seededOrder(t, filepath.Join(r.data, "generations", "1", "collect", ss.Task, "episodes.json"), ts.Ranking)
	t.Logf("Kendall τ between the Bradley–Terry order and the scripted executor's seeded quality (scripted.SeedQuality: seed mod 3 extra checks per worker): %.3f over %d pairs", tau, n)
	if n == 0 || tau <= 0.3 {
		t.Errorf("τ = %.3f over %d pairs of differing quality: the ranking does not follow the seeded quality", tau, n)
	}
	if len(ts.Ranking) > 1 && ts.Ranking[0].Score == ts.Ranking[len(ts.Ranking)-1].Score {
		t.Errorf("every Bradley–Terry score ties: %+v", ts.Ranking)
	}
	for _, st := range s.Stages {
		t.Logf("stage %-8s %6.1fs", st.Name, st.Seconds)
	}
	t.Logf("tokens %+v", s.Tokens)
	checkDataset(t, s.Dataset, ts.Train)
	checkDataset(t, s.Dataset+"-val", ts.Val)
	for _, p := range []string{filepath.Join(s.Adapter, "adapter_config.json"), filepath.Join(s.Merged, "config.json")} {
		if _, err := os.Stat(p); err != nil {
			t.Error(err)
		}
	}
	if s.Tokens.Generated == 0 || s.Tokens.StoredSupervised == 0 || s.Tokens.ProcessedSupervised == 0 {
		t.Errorf("tokens %+v", s.Tokens)
	}
	out, err = r.massctl("model", "list", "--json")
	var ms []api.Model
	if err != nil || json.Unmarshal(out, &ms) != nil {
		t.Fatalf("model list: %v %s", err, out)
	}
	var gen *api.Model
	for i := range ms {
		if ms[i].Name == "gen-1" {
			gen = &ms[i]
		}
	}
	if gen == nil || gen.G != 1 || gen.Parent != "scripted" || gen.Error != "" {
		t.Errorf("model list has no callable gen-1 of parent scripted: %s", out)
	}
}

// checkSelection wants ranks 1–15 in train and rank 16 in val, in order.
func checkSelection(t *testing.T, ts generationfmt.TaskSummary) {
	t.Helper()
	byRank := map[int]string{}
	for _, e := range ts.Ranking {
		byRank[e.Rank] = e.ID
	}
	for i, id := range append(append([]string{}, ts.Train...), ts.Val...) {
		if byRank[i+1] != id {
			t.Errorf("selection position %d is %s, rank %d is %s", i, id, i+1, byRank[i+1])
		}
	}
}

// checkDataset wants the dataset built from exactly the episodes ids:
// its manifest counts them and its rows name those and no others.
func checkDataset(t *testing.T, dir string, ids []string) {
	t.Helper()
	man := readJSON[struct {
		Episodes int `json:"episodes"`
	}](t, filepath.Join(dir, "manifest.json"))
	if man.Episodes != len(ids) {
		t.Errorf("%s built from %d episodes, want the %d selected", dir, man.Episodes, len(ids))
	}
	got := map[string]bool{}
	for _, row := range readJSONL[struct {
		Episode string `json:"episode"`
	}](t, filepath.Join(dir, "rows.jsonl")) {
		got[row.Episode] = true
	}
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s rows come from episodes %v, want %v", dir, got, want)
	}
}

// seededOrder is Kendall's τ over the pairs of ranked episodes whose
// seeded quality (scripted.SeedQuality of the episode's seed) differs: +1
// when the better one scores strictly higher, −1 when strictly lower, 0 on
// a tied score, divided by the number of such pairs.
func seededOrder(t *testing.T, slotsFile string, ranking []generationfmt.RankEntry) (float64, int) {
	t.Helper()
	type slot struct {
		Seed   int64 `json:"seed"`
		Result *struct {
			EpisodeID string `json:"episode_id"`
		} `json:"result"`
	}
	quality := map[string]int{}
	for _, sl := range readJSON[[]slot](t, slotsFile) {
		if sl.Result != nil {
			quality[sl.Result.EpisodeID] = scripted.SeedQuality(int(sl.Seed))
		}
	}
	sum, n := 0, 0
	for i := range ranking {
		for j := i + 1; j < len(ranking); j++ {
			a, b := ranking[i], ranking[j]
			qa, qb := quality[a.ID], quality[b.ID]
			if qa == qb {
				continue
			}
			n++
			if a.Score != b.Score && (qa > qb) == (a.Score > b.Score) {
				sum++
			} else if a.Score != b.Score {
				sum--
			}
		}
	}
	if n == 0 {
		return 0, 0
	}
	return float64(sum) / float64(n), n
}

type e2eSlot struct {
	Name     string `json:"slot"`
	Attempts []struct {
		N      int    `json:"attempt"`
		ID     string `json:"id"`
		Status string `json:"status"`
	} `json:"attempts"`
	Result *json.RawMessage `json:"result"`
}

// TestGenerationKillDuringCollect kills massd with SIGKILL while a
// generation collects, restarts it, and checks that the job completes
// with no finished episode run again and the cut-off ones retried as the
// next attempt of their slot.
func TestGenerationKillDuringCollect(t *testing.T) {
	r := newGradedRig(t)
	cmd := exec.Command("go", "build", "-o", r.bin+"/", "./cmd/mass-train")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build mass-train: %v\n%s", err, out)
	}
	out, err := r.massctl("search", "--task", "../examples/tasks/sales-analysis/task.yaml", "--iterations", "3", "--seed", "0", "--model", "scripted", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var ss search.Summary
	if err := json.Unmarshal(out, &ss); err != nil || !ss.BeatsReference {
		t.Fatalf("search: %v %s", err, out)
	}
	out, err = r.massctl("generation", "start", "--tasks", ss.Task, "--model", "scripted", "--episodes", "8", "--min-success", "4",
		"--cap", "10", "--opponents", "2", "--train", "3", "--val", "1", "--train-steps", "1", "--seed", "2", "--detach")
	if err != nil {
		t.Fatal(err)
	}
	jobID := string(bytes.TrimSpace(out))
	slotsFile := filepath.Join(r.data, "generations", "1", "collect", ss.Task, "episodes.json")
	finished := func() (map[string]int, []e2eSlot) {
		b, err := os.ReadFile(slotsFile)
		var slots []e2eSlot
		if err != nil || json.Unmarshal(b, &slots) != nil {
			return nil, nil
		}
		done := map[string]int{}
		for _, s := range slots {
			if s.Result != nil {
				done[s.Name] = len(s.Attempts)
			}
		}
		return done, slots
	}
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		if done, _ := finished(); len(done) >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("collect never finished 3 episodes")
		}
	}
	r.stop(true)
	before, slots := finished()
	running := 0
	for _, s := range slots {
		if s.Result == nil {
			running++
		}
	}
	r.start()
	j := r.waitJob(jobID, 10*time.Minute)
	if j.State != "succeeded" {
		t.Fatalf("job after restart: %s %s", j.State, j.Error)
	}
	_, after := finished()
	for _, s := range after {
		if n, ok := before[s.Name]; ok && len(s.Attempts) != n {
			t.Errorf("slot %s finished before the kill, run again: %+v", s.Name, s.Attempts)
		}
		for i, a := range s.Attempts {
			if a.Status == "running" || (a.Status == "interrupted" && i == len(s.Attempts)-1) {
				t.Errorf("slot %s: attempt %d left %s", s.Name, a.N, a.Status)
			}
		}
	}
	t.Logf("killed with %d episodes finished and %d cut off; job attempt %d completed", len(before), running, j.Attempt)
}
