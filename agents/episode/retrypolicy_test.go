package episode_test

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/mass-dev/mass/agents/episode"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mass-dev/mass/agents/model/fakeopenai"
	"github.com/mass-dev/mass/agents/model/scripted"
	"github.com/mass-dev/mass/agents/record"
	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/client"
	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/sandbox/docker"
	"github.com/mass-dev/mass/sandbox/image"
)

// TestKillNineRetryPolicy kill -9s a real massd under two episode jobs, one
// with on_interrupt retry (the default) and one with fail, and restarts
// it. Both jobs report the lost attempt: its number, the reason and the
// tokens its episode spent (equal to the usage its recording holds); the
// retry job runs a fresh episode as attempt 2, the fail job ends failed
// without one.
func TestKillNineRetryPolicy(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills massd; run without -short")
	}
	episode.NeedEngine(t)
	tmp := t.TempDir()
	bin := buildChaosBinaries(t, tmp)
	slow := func(r *fakeopenai.Request) fakeopenai.Reply {
		rep := scripted.Policy(r)
		rep.Delay = 300 * time.Millisecond
		return rep
	}
	srv := fakeopenai.New(slow, fakeopenai.WithoutHistory())
	if err := srv.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	data, sock := filepath.Join(tmp, "data"), filepath.Join(tmp, "massd.sock")
	conf := fmt.Sprintf("socket: %s\ndata_dir: %s\njobs:\n  concurrency: 2\nsandbox:\n  image: %s\n  helper: %s\nmodels:\n  fake:\n    base_url: %s\n    model: fake-model\n",
		sock, data, image.TestRef, filepath.Join(bin, "mass-sandbox-helper"), srv.URL())
	confPath := filepath.Join(tmp, "massd.yaml")
	if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	rt, err := docker.New(context.Background(), docker.Config{DaemonID: datadir.New(data).SandboxDaemonID(), HelperPath: filepath.Join(bin, "mass-sandbox-helper"), Logger: episode.Quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { rt.ReapOrphans(context.Background(), func(string) bool { return false }); rt.Close() }()
	ctx := context.Background()
	cl := client.New(sock)
	d := startChaosMassd(t, bin, confPath, sock)
	task, err := cl.AddTask(ctx, chaosTask(t, "policy", 0))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.SubmitJob(ctx, api.JobRequest{Kind: episode.KindName, TaskID: task.ID, Params: []byte(`{"model":"fake","on_interrupt":"sometimes"}`)}); err == nil {
		t.Fatal("on_interrupt \"sometimes\" was accepted")
	}
	jobs := map[string]string{}
	for _, policy := range []string{"", episode.OnInterruptFail} {
		params := `{"model":"fake"}`
		if policy != "" {
			params = `{"model":"fake","on_interrupt":"` + policy + `"}`
		}
		j, err := cl.SubmitJob(ctx, api.JobRequest{Kind: episode.KindName, TaskID: task.ID, Params: []byte(params)})
		if err != nil {
			t.Fatal(err)
		}
		jobs[j.ID] = policy
	}
	lay := datadir.New(data)
	firstEpisode := map[string]string{}
	waitUntil(t, "two model calls in each job's episode", func() bool {
		for id := range jobs {
			evs, _ := cl.Events(ctx, id, 0)
			for _, ev := range evs {
				if ev.Type == "episode_started" {
					firstEpisode[id], _ = ev.Fields["episode_id"].(string)
				}
			}
			recs, _ := record.ReadFile(filepath.Join(lay.Episode(firstEpisode[id]), episode.RequestsFile))
			if firstEpisode[id] == "" || len(recs) < 2 {
				return false
			}
		}
		return true
	})
	d.Process.Signal(syscall.SIGKILL)
	d.Wait()
	d = startChaosMassd(t, bin, confPath, sock)
	waitJobsTerminal(t, cl, 3*time.Minute)
	for id, policy := range jobs {
		checkLostAttempt(t, cl, lay, id, policy, firstEpisode[id])
	}
	d.Process.Signal(syscall.SIGTERM)
	d.Wait()
}

func checkLostAttempt(t *testing.T, cl *client.Client, lay datadir.Layout, id, policy, lostID string) {
	t.Helper()
	ctx := context.Background()
	j, err := cl.Job(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var want episode.Tokens
	recs, err := record.ReadFile(filepath.Join(lay.Episode(lostID), episode.RequestsFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Response != nil {
			want.Prompt += int64(r.Response.Usage.PromptTokens)
			want.Completion += int64(r.Response.Usage.CompletionTokens)
		}
	}
	var res episode.Result
	_ = json.Unmarshal(j.Result, &res)
	if len(res.LostAttempts) != 1 {
		t.Fatalf("job %s (on_interrupt %q): %s at attempt %d, result %s; want one lost attempt", id, policy, j.State, j.Attempt, j.Result)
	}
	l := res.LostAttempts[0]
	if l.Attempt != 1 || l.EpisodeID != lostID || l.Tokens != want || want.Prompt == 0 || l.Reason == "" {
		t.Errorf("job %s lost attempt %+v; want attempt 1, episode %s, tokens %+v and a reason", id, l, lostID, want)
	}
	evs, _ := cl.Events(ctx, id, 0)
	if n := countEvents(evs, "attempt_lost"); n != 1 {
		t.Errorf("job %s: %d attempt_lost events, want 1", id, n)
	}
	switch policy {
	case episode.OnInterruptFail:
		if j.State != api.StateFailed || j.Attempt != 2 || !strings.Contains(j.Error, "on_interrupt is fail") || countEvents(evs, "episode_started") != 1 {
			t.Errorf("fail job: %s at attempt %d (%s), %d episodes started; want failed at attempt 2 with no new episode", j.State, j.Attempt, j.Error, countEvents(evs, "episode_started"))
		}
	default:
		if j.State != api.StateSucceeded || j.Attempt != 2 || res.Attempt != 2 || res.EpisodeID == lostID {
			t.Errorf("retry job: %s at attempt %d, result attempt %d episode %s; want succeeded at attempt 2 with a fresh episode", j.State, j.Attempt, res.Attempt, res.EpisodeID)
		}
	}
}

func countEvents(evs []api.Event, typ string) int {
	n := 0
	for _, ev := range evs {
		if ev.Type == typ {
			n++
		}
	}
	return n
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
