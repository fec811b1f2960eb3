package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/mass-dev/mass/daemon/api"
)

func TestFollowStreamsEventsUntilTheEnd(t *testing.T) {
	e := newEnv(t)
	m := e.manager(t, 1, WaitKind())
	defer m.Close(context.Background())
	ctx := context.Background()
	if err := m.Follow(ctx, "job-nope", 0, func([]api.StreamItem) error { return nil }); !errors.Is(err, api.ErrNotFound) {
		t.Fatalf("Follow of a missing job = %v, want not found", err)
	}
	j, err := m.Submit(ctx, api.JobRequest{Kind: "wait", Params: json.RawMessage(`{"seconds":0.05,"interval_ms":10}`)})
	if err != nil {
		t.Fatal(err)
	}
	var seqs []int64
	var last *api.Job
	err = m.Follow(ctx, j.ID, 0, func(items []api.StreamItem) error {
		for _, it := range items {
			if it.Event != nil {
				seqs = append(seqs, it.Event.Seq)
			}
			if it.Job != nil {
				last = it.Job
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range seqs {
		if s != int64(i+1) {
			t.Fatalf("events %v are not 1..n in order", seqs)
		}
	}
	if last == nil || last.State != api.StateSucceeded || last.LastSeq != int64(len(seqs)) {
		t.Errorf("last snapshot %+v after %d events, want succeeded with every event sent", last, len(seqs))
	}
	stop := errors.New("client went away")
	if err := m.Follow(ctx, j.ID, 0, func([]api.StreamItem) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("Follow = %v, want the send error", err)
	}
}
