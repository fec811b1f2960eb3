package jobs

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/store"
	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/jobkind"
)

// Also-list: interrupted jobs were requeued without end (up to attempt 12
// in the campaign), the oldest first each time. Here three jobs are
// interrupted by "crashes" in turn; the requeues must spread over the
// jobs, and no job goes past MaxAutoAttempts.
func TestInterruptedRetriesAreCappedAndSpread(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	kind := jobkind.Kind{Name: "slow", OnInterrupt: jobkind.Retry, Run: func(ctx context.Context, _ jobkind.Job, _ jobkind.Reporter) error { <-ctx.Done(); return ctx.Err() }}
	m, err := NewManager(Options{Store: e.store, Kinds: []jobkind.Kind{kind}, Layout: datadir.New(e.dir), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	base := time.Now()
	for i, id := range []string{"a", "b", "c"} {
		j := api.Job{ID: id, Kind: "slow", State: api.StateQueued, Attempt: 1, Created: base.Add(time.Duration(i) * time.Second)}
		if err := e.store.CreateJob(ctx, j, store.EventInput{Type: "queued"}); err != nil {
			t.Fatal(err)
		}
	}
	claimed := map[string]int{}
	for crash := 0; crash < 12; crash++ {
		q, err := e.store.Queued(ctx, 1) // one slot: the job a crash would hit
		if err != nil {
			t.Fatal(err)
		}
		if len(q) == 0 {
			break
		}
		if ok, err := e.store.Claim(ctx, q[0].ID, time.Now(), store.EventInput{Type: "started"}); !ok || err != nil {
			t.Fatalf("claim %s: %v %v", q[0].ID, ok, err)
		}
		claimed[q[0].ID]++
		if err := m.recover(ctx); err != nil { // the next start after a kill
			t.Fatal(err)
		}
	}
	for _, id := range []string{"a", "b", "c"} {
		j, err := e.store.Job(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if claimed[id] != MaxAutoAttempts || j.State != api.StateInterrupted || j.Attempt != MaxAutoAttempts {
			t.Errorf("job %s: %d attempts ran, now %s at attempt %d; want %d, interrupted", id, claimed[id], j.State, j.Attempt, MaxAutoAttempts)
		}
		evs := eventTypes(t, e.store, id)
		if last := evs[len(evs)-1]; last != "settled" {
			t.Errorf("job %s events end in %q, want settled: %v", id, last, evs)
		}
	}
	evs, _ := e.store.Events(ctx, "a", 0, 0)
	if msg := evs[len(evs)-1].Message; !strings.Contains(msg, "cap of 3 automatic attempts") {
		t.Errorf("settled message %q does not name the cap", msg)
	}
}
