package store

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/mass-dev/mass/daemon/api"
)

func TestJobsFilter(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "massd.db"))
	ctx := context.Background()
	base := time.Now()
	for i, j := range []api.Job{
		{ID: "a", Kind: "wait", TaskID: "t1"},
		{ID: "b", Kind: "episode", TaskID: "t1"},
		{ID: "c", Kind: "episode", TaskID: "t2"},
	} {
		j.State, j.Attempt, j.Created = api.StateQueued, 1, base.Add(time.Duration(i)*time.Second)
		if err := s.CreateJob(ctx, j, EventInput{Type: "queued"}); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		f    JobFilter
		want []string
	}{
		{JobFilter{}, []string{"c", "b", "a"}},
		{JobFilter{Kind: "episode"}, []string{"c", "b"}},
		{JobFilter{Kind: "episode", TaskID: "t1"}, []string{"b"}},
		{JobFilter{State: api.StateRunning}, nil},
		{JobFilter{Limit: 1}, []string{"c"}},
	}
	for _, tt := range tests {
		js, err := s.Jobs(ctx, tt.f)
		if err != nil {
			t.Fatalf("Jobs(%+v): %v", tt.f, err)
		}
		var got []string
		for _, j := range js {
			got = append(got, j.ID)
		}
		if len(got) != len(tt.want) {
			t.Errorf("Jobs(%+v) = %v, want %v", tt.f, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("Jobs(%+v) = %v, want %v", tt.f, got, tt.want)
				break
			}
		}
	}
}
