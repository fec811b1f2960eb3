package daemon_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mass-dev/mass/agents/model/scripted"
	"github.com/mass-dev/mass/cycle/workflow"
	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/client"
	"github.com/mass-dev/mass/jobwire"
	"github.com/mass-dev/mass/sandbox/image"
	"github.com/mass-dev/mass/searchfmt"
	"github.com/mass-dev/mass/trainer/model"
	"github.com/mass-dev/mass/trainer/sft"
	"github.com/mass-dev/mass/trainer/train"
)

// kindCase is one job kind at the tiniest size the conformance suite runs:
// good params that keep it busy, a known field and params typing it wrong.
type kindCase struct {
	kind, task, params string
	field, wrong       string
	// pre starts every bad params object: the loop kinds name a model that
	// is not an external judge, so their own validation is what answers.
	pre string
	// episodes: the kind runs sandboxed episodes, and an attempt is ready
	// to interrupt once one of them runs; otherwise once it reports progress.
	episodes bool
}

// kindCases lists every kind massd runs, at tiny sizes.
var kindCases = []kindCase{
	{kind: jobwire.WaitKind, params: `{"seconds":600,"interval_ms":100}`, field: "seconds", wrong: `{"seconds":"ten"}`},
	{kind: jobwire.TrainKind, params: `{"model":"models/micro","data":"datasets/toy/rows.jsonl","steps":100000,"batch":2,"rank":4,"ckpt_every":5}`,
		field: "steps", wrong: `{"model":"m","data":"d","steps":"many"}`},
	{kind: jobwire.EpisodeKind, task: "projectile-sim", params: `{"model":"scripted"}`, field: "model", wrong: `{"model":3}`, episodes: true},
	{kind: jobwire.SearchKind, task: "sales-analysis", params: `{"model":"scripted","iterations":1}`, field: "iterations", wrong: `{"model":"scripted","iterations":"one"}`, pre: `"model":"scripted",`, episodes: true},
	{kind: jobwire.RolloutKind, params: `{"name":"conf-kill","tasks":["projectile-sim"],"models":["scripted","` + scripted.Gen1Name + `"],"episodes":2}`,
		field: "episodes", wrong: `{"tasks":["projectile-sim"],"models":["a","b"],"episodes":"two"}`, episodes: true},
	{kind: jobwire.JudgePairsKind, params: `{"rollout":"conf-done","mode":"agent","no_self":false,"concurrency":1}`,
		field: "rollout", wrong: `{"rollout":7}`, episodes: true},
	{kind: jobwire.GenerationKind, params: `{"tasks":["sales-analysis"],"model":"scripted","episodes":4,"min_success":4,"cap":6,"opponents":2,"train":3,"val":1,"train_steps":2}`,
		field: "episodes", wrong: `{"model":"scripted","tasks":["sales-analysis"],"episodes":"four"}`, pre: `"model":"scripted",`, episodes: true},
	{kind: jobwire.CycleKind, params: `{"tasks":["sales-analysis"],"model":"scripted","generations":1,"search_iterations":1,"episodes":4,"min_success":4,"cap":6,"opponents":2,"train":3,"val":1,"train_steps":2}`,
		field: "generations", wrong: `{"model":"scripted","tasks":["sales-analysis"],"generations":"one"}`, pre: `"model":"scripted",`, episodes: true},
}

// TestKindConformance is the job-kind conformance suite: every kind massd
// runs, at tiny sizes on the real massd, Docker and the scripted model,
// must (1) refuse bad params with a 400 that names the field, (2) survive
// kill -9 of massd: the cut-off attempt is recorded interrupted, its
// running episodes are closed, and the job resumes as attempt 2, and (3)
// cancel: the job ends cancelled with no episode left running.
func TestKindConformance(t *testing.T) {
	buildMassTrainBeside(t)
	r := newRigYAML(t, externalJudge(t), image.TestRef)
	conformanceFixtures(t, r)
	if len(kindCases) != 8 {
		t.Fatalf("%d kinds in the suite, want all eight", len(kindCases))
	}
	for _, c := range kindCases {
		t.Run(c.kind, func(t *testing.T) {
			badParams(t, r.cl, c)
			if c.kind == jobwire.JudgePairsKind {
				finishedRollout(t, r, "conf-done")
			}
			killAndCancel(t, r, c)
			if c.kind == jobwire.GenerationKind { // the cycle makes generation 1 again
				if _, err := r.cl.RemoveGeneration(context.Background(), 1); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
	episodesBelongToJobs(t, r.cl)
}

// externalJudge serves a scripted model as massd's one external judge
// (judge-pairs needs one), on its own endpoint with its own key.
func externalJudge(t *testing.T) string {
	t.Helper()
	js, err := scripted.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { js.Close() })
	key := filepath.Join(t.TempDir(), "judge.key")
	if err := os.WriteFile(key, []byte(js.Key()), 0o600); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("models:\n  judge-a:\n    base_url: %s\n    model: %s\n    api_key_file: %s\njudges:\n  - model: judge-a\n    seeds: [42]\n",
		js.URL(), scripted.ModelID, key)
}

// episodesBelongToJobs: every episode row names a job massd has, so that a
// job's episodes are the ones its cancel and recovery close (a search run
// by a cycle records its episodes with the cycle).
func episodesBelongToJobs(t *testing.T, cl *client.Client) {
	t.Helper()
	ctx := context.Background()
	eps, err := cl.Episodes(ctx, client.EpisodeFilter{Limit: 100000})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range eps {
		if _, err := cl.Job(ctx, e.JobID); err != nil {
			t.Errorf("episode %s names job %q: %v", e.ID, e.JobID, err)
		}
	}
}

// badParams submits an unknown field and a wrongly typed known one: both
// are refused as invalid (400), naming the field, and no job is made.
func badParams(t *testing.T, cl *client.Client, c kindCase) {
	t.Helper()
	ctx := context.Background()
	before, _ := cl.Jobs(ctx, client.JobFilter{Kind: c.kind, Limit: 1000})
	for field, params := range map[string]string{"zz_no_such_field": `{` + c.pre + `"zz_no_such_field":1}`, c.field: c.wrong} {
		_, err := cl.SubmitJob(ctx, api.JobRequest{Kind: c.kind, TaskID: c.task, Params: json.RawMessage(params)})
		if !errors.Is(err, api.ErrInvalid) || !strings.Contains(err.Error(), field) {
			t.Errorf("%s params %s: %v, want a 400 naming %q", c.kind, params, err, field)
		}
	}
	if after, _ := cl.Jobs(ctx, client.JobFilter{Kind: c.kind, Limit: 1000}); len(after) != len(before) {
		t.Errorf("%s: refused submissions made %d jobs", c.kind, len(after)-len(before))
	}
}

// killAndCancel runs c until its first attempt has something to
// interrupt, kills massd (SIGKILL), restarts it, checks the recovery and
// then cancels the resumed job.
func killAndCancel(t *testing.T, r *searchRig, c kindCase) {
	ctx := context.Background()
	j, err := r.cl.SubmitJob(ctx, api.JobRequest{Kind: c.kind, TaskID: c.task, Params: json.RawMessage(c.params)})
	if err != nil {
		t.Fatal(err)
	}
	var cut []string
	waitUntil(t, c.kind+" attempt 1 under way", 4*time.Minute, func() bool {
		cut = runningEpisodes(t, r.cl, j.ID)
		got, err := r.cl.Job(ctx, j.ID)
		if err != nil || api.Terminal(got.State) {
			t.Fatalf("%s ended before it could be interrupted: %+v %v", c.kind, got, err)
		}
		if c.episodes {
			return len(cut) > 0
		}
		return got.State == api.StateRunning && got.Progress != nil && got.Progress.Stage != "" && got.Progress.Stage != "starting"
	})
	r.stop(true)
	r.start()
	waitUntil(t, "start-up recovery", 2*time.Minute, func() bool {
		h, err := r.cl.Health(ctx)
		return err == nil && h.Status != "recovering"
	})
	waitUntil(t, c.kind+" resumed as attempt 2", 2*time.Minute, func() bool {
		got, err := r.cl.Job(ctx, j.ID)
		return err == nil && got.Attempt >= 2 && (got.State == api.StateRunning || got.State == api.StateQueued)
	})
	evs, err := r.cl.Events(ctx, j.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if countType(evs, "interrupted") < 1 || countType(evs, "requeued") < 1 {
		t.Errorf("%s: no interrupted and requeued events for the cut-off attempt: %v", c.kind, eventTypes(evs))
	}
	still := runningEpisodes(t, r.cl, j.ID)
	for _, id := range cut {
		if slices.Contains(still, id) {
			t.Errorf("%s: episode %s cut off by the kill is still running after recovery", c.kind, id)
		}
	}
	if _, err := r.cl.CancelJob(ctx, j.ID); err != nil {
		t.Fatal(err)
	}
	final := r.waitJob(j.ID, 3*time.Minute)
	if final.State != api.StateCancelled {
		t.Errorf("%s after cancel: %s (%s), want cancelled", c.kind, final.State, final.Error)
	}
	if left := runningEpisodes(t, r.cl, j.ID); len(left) > 0 {
		t.Errorf("%s cancelled with episodes still running: %v", c.kind, left)
	}
}

func runningEpisodes(t *testing.T, cl *client.Client, job string) []string {
	t.Helper()
	eps, err := cl.Episodes(context.Background(), client.EpisodeFilter{JobID: job, Status: api.StateRunning, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range eps {
		ids = append(ids, e.ID)
	}
	return ids
}

func eventTypes(evs []api.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}

// conformanceFixtures adds the tasks, a finished search of sales-analysis
// that beat the reference (what a generation starts from), and the train
// kind's micro model and rows.
func conformanceFixtures(t *testing.T, r *searchRig) {
	t.Helper()
	for _, task := range []string{"projectile-sim", "sales-analysis"} {
		if out, err := r.massctl("task", "add", "../examples/tasks/"+task+"/task.yaml"); err != nil {
			t.Fatalf("task add: %v %s", err, out)
		}
	}
	dir := filepath.Join(r.data, "search", "sales-analysis", "conf-fixture")
	if err := (workflow.Versions{Dir: dir}).Put(1, workflow.Generic()); err != nil {
		t.Fatal(err)
	}
	one := 1
	b, _ := json.Marshal(searchfmt.Retained{Version: &one, BeatsReference: true, Model: "scripted", SearchID: "conf-fixture",
		TaskID: "sales-analysis", Champion: 1, Design: filepath.Join(searchfmt.VersionsDir, searchfmt.VersionFile(1)), Finished: true})
	if err := os.WriteFile(filepath.Join(dir, searchfmt.RetainedFile), b, 0o640); err != nil {
		t.Fatal(err)
	}
	mc, err := model.Preset("micro")
	if err != nil {
		t.Fatal(err)
	}
	if err := model.NewRandom(mc, 1).Save(filepath.Join(r.data, "models", "micro"), "BF16", 0); err != nil {
		t.Fatal(err)
	}
	rows, err := train.ToyRows(16, 12, 8, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(r.data, "datasets", "toy"), 0o750); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(r.data, "datasets", "toy", "rows.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := sft.WriteRows(f, rows); err != nil {
		t.Fatal(err)
	}
}

// finishedRollout runs a one-episode rollout to the end, for judge-pairs.
func finishedRollout(t *testing.T, r *searchRig, name string) {
	t.Helper()
	params := `{"name":"` + name + `","tasks":["projectile-sim"],"models":["scripted","` + scripted.Gen1Name + `"],"episodes":1}`
	j, err := r.cl.SubmitJob(context.Background(), api.JobRequest{Kind: jobwire.RolloutKind, Params: json.RawMessage(params)})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.waitJob(j.ID, 5*time.Minute); got.State != api.StateSucceeded {
		t.Fatalf("rollout for judge-pairs: %s %s", got.State, got.Error)
	}
}

// buildMassTrainBeside builds mass-train next to the test's massd, where
// massd looks for it.
func buildMassTrainBeside(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds massd and runs real sandboxes")
	}
	bin := buildBinaries(t)
	cmd := exec.Command("go", "build", "-o", bin+"/", "./cmd/mass-train")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build mass-train: %v\n%s", err, out)
	}
}
