package daemon_test

import (
	"context"
	"testing"
	"time"

	"github.com/mass-dev/mass/daemon"
	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/daemontest"
	"github.com/mass-dev/mass/daemon/jobs"
	"github.com/mass-dev/mass/jobkind"
)

// Start-up: the socket answers while what a crash left is reaped (healthz
// "recovering" with the stage), a task upload and a job submitted meanwhile
// are accepted and queued, and the job starts once recovery ends. On
// e9e71d1 massd reaped before it listened, so nothing answered until the
// reap was over.
func TestStartupAnswersWhileRecovering(t *testing.T) {
	release := make(chan struct{})
	reap := func(ctx context.Context, rec jobkind.Recovery, stage func(string, int)) error {
		stage(daemon.StageCloseEpisodes, 3)
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
	}
	d := daemontest.Start(t, daemon.Options{Kinds: []jobkind.Kind{jobs.WaitKind()}, ReapOrphans: reap})
	ctx := context.Background()
	h, err := d.Client.Health(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if h.Status != "recovering" || h.Recovery == nil || h.Recovery.Stage != daemon.StageCloseEpisodes || h.Recovery.Episodes != 3 {
		t.Fatalf("healthz while recovering: %+v (recovery %+v)", h, h.Recovery)
	}
	if _, err := d.Client.AddTask(ctx, "../examples/tasks/sales-analysis/task.yaml"); err != nil {
		t.Fatalf("task add while recovering: %v", err)
	}
	job, err := d.Client.SubmitJob(ctx, api.JobRequest{Kind: "wait", Params: []byte(`{"seconds":0.05,"interval_ms":10}`)})
	if err != nil {
		t.Fatalf("submit while recovering: %v", err)
	}
	time.Sleep(100 * time.Millisecond) // a dispatch pass or two
	if j, err := d.Client.Job(ctx, job.ID); err != nil || j.State != api.StateQueued {
		t.Fatalf("job during recovery: %s (%v), want queued", j.State, err)
	}
	close(release)
	deadline := time.Now().Add(30 * time.Second)
	for {
		j, err := d.Client.Job(ctx, job.ID)
		if err != nil {
			t.Fatal(err)
		}
		if j.State == api.StateSucceeded {
			break
		}
		if api.Terminal(j.State) || time.Now().After(deadline) {
			t.Fatalf("job after recovery: %s %s", j.State, j.Error)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if h, err := d.Client.Health(ctx); err != nil || h.Status != "ok" || h.Recovery != nil {
		t.Errorf("healthz after recovery: %+v %v", h, err)
	}
}
