package daemon_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mass-dev/mass/agents/episode"
	"github.com/mass-dev/mass/agents/model/fakeopenai"
	"github.com/mass-dev/mass/agents/model/scripted"
	"github.com/mass-dev/mass/cycle/search"
	"github.com/mass-dev/mass/daemon/api"
)

type fileStamp struct {
	sum   [32]byte
	mtime time.Time
}

// stamps records content and mtime of every finished artifact of a search.
func stamps(t *testing.T, dir string) map[string]fileStamp {
	t.Helper()
	out := map[string]fileStamp{}
	for _, pat := range []string{"comparisons/*/result.json", "comparisons/*/full_prompt.txt", "versions/*.txt", "optimizer/*/result.json", "updated_queries/*.txt"} {
		ms, _ := filepath.Glob(filepath.Join(dir, pat))
		for _, m := range ms {
			b, err := os.ReadFile(m)
			st, serr := os.Stat(m)
			if err != nil || serr != nil {
				t.Fatal(err, serr)
			}
			out[m] = fileStamp{sha256.Sum256(b), st.ModTime()}
		}
	}
	return out
}

func slotsOf(t *testing.T, dir string) map[string]search.Slot {
	var list []search.Slot
	b, err := os.ReadFile(filepath.Join(dir, search.EpisodesFile))
	if err != nil || json.Unmarshal(b, &list) != nil {
		return nil
	}
	m := map[string]search.Slot{}
	for _, s := range list {
		m[s.Name] = s
	}
	return m
}

// TestSearchKillNineResumes kills massd with SIGKILL while the v1 episode
// of a search runs, restarts it, and checks the search finishes with no
// finished episode, verdict or design redone and the cut-off episode
// retried as attempt 2 of its slot.
func TestSearchKillNineResumes(t *testing.T) {
	slow := fakeopenai.New(func(r *fakeopenai.Request) fakeopenai.Reply {
		rep := scripted.Policy(r)
		rep.Delay = 150 * time.Millisecond
		return rep
	})
	if err := slow.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	r := newSearchRig(t, map[string]string{"slow": slow.URL()})
	ctx := context.Background()
	task, err := r.cl.AddTask(ctx, "../examples/tasks/sales-analysis/task.yaml")
	if err != nil {
		t.Fatal(err)
	}
	job, err := r.cl.SubmitJob(ctx, api.JobRequest{Kind: search.KindName, TaskID: task.ID, Params: []byte(`{"model":"slow","iterations":2}`)})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(r.data, search.Dir, task.ID, job.ID)
	var cut string
	deadline := time.Now().Add(3 * time.Minute)
	for cut == "" {
		if time.Now().After(deadline) {
			t.Fatal("the v1 episode never got a worker running")
		}
		if sl, ok := slotsOf(t, dir)["v1"]; ok && len(sl.Attempts) == 1 && sl.Attempts[0].Status == "running" {
			id := sl.Attempts[0].EpisodeID
			if b, err := os.ReadFile(filepath.Join(r.data, "episodes", id, episode.LedgerFile)); err == nil && strings.Contains(string(b), `"agent":"worker-1"`) {
				cut = id
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	before := stamps(t, dir)
	slotsBefore := slotsOf(t, dir)
	r.stop(true) // SIGKILL
	if _, err := os.Stat(filepath.Join(r.data, "episodes", cut, episode.StatusFile)); err == nil {
		t.Fatal("the cut-off episode finished before the kill; the test proves nothing")
	}
	r.start()
	final := r.waitJob(job.ID, 4*time.Minute)
	if final.State != api.StateSucceeded || final.Attempt != 2 {
		t.Fatalf("resumed search: %s attempt %d (%s)", final.State, final.Attempt, final.Error)
	}
	var sum search.Summary
	if err := json.Unmarshal(final.Result, &sum); err != nil {
		t.Fatal(err)
	}
	after := stamps(t, dir)
	for p, st := range before {
		if after[p] != st {
			t.Errorf("%s was rewritten after the restart", p)
		}
	}
	if len(before) == 0 || !strings.Contains(strings.Join(keys(before), " "), "v0_vs_no_harness/result.json") {
		t.Fatalf("nothing was finished before the kill: %v", keys(before))
	}
	slots := slotsOf(t, dir)
	for name, sl := range slotsBefore {
		if sl.Result != nil && (slots[name].Result == nil || slots[name].Result.EpisodeID != sl.Result.EpisodeID || len(slots[name].Attempts) != 1) {
			t.Errorf("finished slot %s was redone: %+v", name, slots[name])
		}
	}
	v1 := slots["v1"]
	if len(v1.Attempts) != 2 || v1.Attempts[0].EpisodeID != cut || v1.Attempts[0].Status != "interrupted" || v1.Attempts[1].Status != "finished" || v1.Attempts[1].N != 2 {
		t.Errorf("v1 attempts %+v", v1.Attempts)
	}
	st, err := episode.ReadStatus(filepath.Join(r.data, "episodes", cut))
	if err != nil || st.Failure != episode.FailInfra {
		t.Errorf("cut-off episode status %+v %v", st, err)
	}
	// Issue 31 (D1): its store row is closed too, with one event; on
	// e9e71d1 it stayed "running" forever.
	if e, err := r.cl.Episode(ctx, cut); err != nil || e.Status != "interrupted" {
		t.Errorf("cut-off episode row: %s %v, want interrupted", e.Status, err)
	}
	evs, _ := r.cl.Events(ctx, job.ID, 0)
	closed := 0
	for _, e := range evs {
		if e.Type == "episode_interrupted" && e.Fields["episode_id"] == cut {
			closed++
		}
	}
	if closed != 1 {
		t.Errorf("%d episode_interrupted events for %s, want 1", closed, cut)
	}
	if sum.Episodes != 4 || sum.EpisodeAttempts != 5 || sum.Comparisons != 5 {
		t.Errorf("summary %+v", sum)
	}
	// Only the comparisons after the kill called the judge: v1 and v2 against reference and champion.
	if sum.Calls.Judgments != 4 || sum.Calls.OptimizerCalls != 1 {
		t.Errorf("calls after the restart %+v, want 4 judgments and 1 optimizer call", sum.Calls)
	}
	eps, _ := filepath.Glob(filepath.Join(r.data, "episodes", "ep-*"))
	if len(eps) != 5 {
		t.Errorf("%d episode directories, want 5 (4 slots + 1 retried attempt)", len(eps))
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
