package store

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/mass-dev/mass/daemon/api"
)

// Issue 31 (D1): closing an interrupted episode's row is idempotent, and a
// sub-job's episode (a cycle's search) reports to the job it runs in.
func TestCloseEpisode(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "massd.db"))
	ctx := context.Background()
	now := time.Now()
	if err := s.CreateJob(ctx, api.Job{ID: "j-a-b", Kind: "cycle", State: api.StateRunning, Attempt: 1, Created: now}, EventInput{Type: "queued"}); err != nil {
		t.Fatal(err)
	}
	for _, e := range []api.Episode{
		{ID: "ep-own", JobID: "j-a-b", Status: api.StateRunning},
		{ID: "ep-sub", JobID: "j-a-b-g1-0", Status: api.StateRunning},
		{ID: "ep-done", JobID: "j-a-b", Status: "completed"},
	} {
		if err := s.UpsertEpisode(ctx, e, now); err != nil {
			t.Fatal(err)
		}
	}
	ev := EventInput{Type: "episode_interrupted", Message: "cut off"}
	for round := range 2 {
		for _, tc := range []struct {
			id   string
			want bool
		}{{"ep-own", round == 0}, {"ep-sub", round == 0}, {"ep-done", false}, {"ep-absent", false}} {
			changed, err := s.CloseEpisode(ctx, api.Episode{ID: tc.id, Status: "interrupted"}, ev, now)
			if err != nil || changed != tc.want {
				t.Errorf("round %d: close %s = %v, %v; want %v", round, tc.id, changed, err, tc.want)
			}
		}
	}
	for id, want := range map[string]string{"ep-own": "interrupted", "ep-sub": "interrupted", "ep-done": "completed"} {
		if e, err := s.Episode(ctx, id); err != nil || e.Status != want {
			t.Errorf("%s: %s %v, want %s", id, e.Status, err, want)
		}
	}
	evs, err := s.Events(ctx, "j-a-b", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range evs {
		if e.Type == ev.Type {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d episode_interrupted events on the job, want 2 (its own episode and its search's)", n)
	}
}
