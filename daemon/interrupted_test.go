package daemon_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mass-dev/mass/agents/episode"
	"github.com/mass-dev/mass/daemon"
	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/client"
	"github.com/mass-dev/mass/daemon/config"
	"github.com/mass-dev/mass/daemon/daemontest"
	"github.com/mass-dev/mass/daemon/jobs"
	"github.com/mass-dev/mass/daemon/store"
	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/episodefmt"
	"github.com/mass-dev/mass/jobkind"
	"github.com/mass-dev/mass/sandbox/image"
	"github.com/mass-dev/mass/sandbox/sandboxtest"
)

// crashedState writes what a kill -9 during a search leaves: the job
// running, one of its episodes running in the store, with an episode.json
// and no run_status.json, and a second one whose row says running though
// its directory was never made.
func crashedState(t *testing.T, cfg *config.Config) (jobID, cut, unborn string) {
	t.Helper()
	ctx := context.Background()
	lay := datadir.New(cfg.DataDir)
	if err := os.MkdirAll(lay.Root, 0o750); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, lay.DB())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	jobID, cut, unborn = jobs.NewID(), episode.NewID(), episode.NewID()
	if err := st.CreateJob(ctx, api.Job{ID: jobID, Kind: "search", State: api.StateRunning, Attempt: 1, Created: time.Now(), WorkDir: lay.Job(jobID)},
		store.EventInput{Type: "queued"}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{cut, unborn} {
		if err := st.UpsertEpisode(ctx, api.Episode{ID: id, JobID: jobID, Status: api.StateRunning, Dir: lay.Episode(id)}, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := json.Marshal(episodefmt.Info{EpisodeID: cut, JobID: jobID, Model: "scripted", Started: time.Now().UTC()})
	if err := os.MkdirAll(lay.Episode(cut), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(lay.Episode(cut), episode.EpisodeFile), b, 0o640); err != nil {
		t.Fatal(err)
	}
	return jobID, cut, unborn
}

// startBuiltins runs massd in-process with the builtins (the real Docker
// runtime) but no job kinds, and waits until start-up recovery is done.
func startBuiltins(t *testing.T, cfg *config.Config) (*daemontest.Daemon, *client.Client) {
	t.Helper()
	b, err := daemon.NewBuiltins(cfg, quiet)
	if err != nil {
		t.Fatal(err)
	}
	d := daemontest.Start(t, daemon.Options{Config: cfg, Builtins: b, Kinds: []jobkind.Kind{}})
	deadline := time.Now().Add(2 * time.Minute)
	for {
		h, err := d.Client.Health(context.Background())
		if err == nil && h.Status != "recovering" {
			return d, d.Client
		}
		if time.Now().After(deadline) {
			t.Fatalf("recovery did not end: %+v %v", h, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// D1: an episode a crash cut off ends "interrupted" in the store, with one
// episode_interrupted event, however often massd restarts; on e9e71d1
// start-up wrote run_status.json and left the row running forever.
func TestStartupClosesInterruptedEpisodeRows(t *testing.T) {
	ctx := context.Background()
	if cli, skip, err := sandboxtest.Engine(ctx, "start-up recovery"); err != nil {
		t.Fatal(err)
	} else if cli == nil {
		t.Skip(skip)
	}
	helper, err := sandboxtest.BuildHelper(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cfg := daemontest.Config(t)
	cfg.Sandbox.Helper, cfg.Sandbox.Image = helper, image.TestRef
	jobID, cut, unborn := crashedState(t, cfg)
	for restart := range 2 {
		d, cl := startBuiltins(t, cfg)
		for _, id := range []string{cut, unborn} {
			e, err := cl.Episode(ctx, id)
			if err != nil || e.Status != "interrupted" {
				t.Errorf("restart %d: episode %s row %+v (%v), want interrupted", restart, id, e.Status, err)
			}
		}
		st, err := episode.ReadStatus(filepath.Join(cfg.DataDir, "episodes", cut))
		if err != nil || st.Failure != episode.FailInfra {
			t.Errorf("restart %d: run_status.json %+v (%v)", restart, st, err)
		}
		evs, err := cl.Events(ctx, jobID, 0)
		if err != nil {
			t.Fatal(err)
		}
		n := map[string]int{}
		for _, ev := range evs {
			if ev.Type == "episode_interrupted" {
				n[ev.Fields["episode_id"].(string)]++
			}
		}
		if n[cut] != 1 || n[unborn] != 1 {
			t.Errorf("restart %d: episode_interrupted events %v, want one for %s and one for %s", restart, n, cut, unborn)
		}
		// The job (of a kind this massd lacks) is judged once, at start;
		// recovery closes its episodes after: only their events follow.
		settled := -1
		for i, ev := range evs {
			if ev.Type == "settled" {
				if settled >= 0 {
					t.Errorf("restart %d: settled twice", restart)
				}
				settled = i
			}
		}
		for _, ev := range evs[settled+1:] {
			if settled < 0 || ev.Type != "episode_interrupted" {
				t.Errorf("restart %d: the job's events %v, want one settled with only episode_interrupted after it", restart, eventTypes(evs))
				break
			}
		}
		if err := d.Stop(); err != nil {
			t.Fatal(err)
		}
	}
}
