package jobs

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mass-dev/mass/daemon/api"
)

// followPoll bounds how long a follower waits without a notification.
const followPoll = time.Second

// followBatch is how many events one read of the store returns.
const followBatch = 500

// Follow streams job id from event seq after: send receives, in order, the
// events as they are recorded and a job snapshot whenever its state,
// progress or attempt changes (and once more after the last events). It
// returns nil once the job reached a final state and every event was sent,
// or when ctx ends; the error of send, or of reading the store, otherwise.
// A job that does not exist fails with api.ErrNotFound before send is called.
func (m *Manager) Follow(ctx context.Context, id string, after int64, send func([]api.StreamItem) error) error {
	if _, err := m.store.Job(ctx, id); err != nil {
		return err
	}
	wake, unsub := m.Subscribe(id)
	defer unsub()
	f := follower{after: after}
	timer := time.NewTimer(followPoll)
	defer timer.Stop()
	for {
		items, full, done, err := f.next(ctx, m, id)
		if err != nil {
			return err
		}
		if err := send(items); err != nil {
			return err
		}
		if full {
			continue
		}
		if done {
			return nil
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(followPoll)
		select {
		case <-ctx.Done():
			return nil
		case <-wake:
		case <-timer.C:
		}
	}
}

// follower is the state of one Follow between reads.
type follower struct {
	after           int64
	lastSnap        []byte
	eventsSinceSnap bool
}

// next reads the events after f.after and the job; full says a whole batch
// was read (more may wait), done that the job ended and all was read.
func (f *follower) next(ctx context.Context, m *Manager, id string) (items []api.StreamItem, full, done bool, err error) {
	evs, err := m.store.Events(ctx, id, f.after, followBatch)
	if err != nil {
		return nil, false, false, err
	}
	for i := range evs {
		items = append(items, api.StreamItem{Event: &evs[i]})
		f.after = evs[i].Seq
		f.eventsSinceSnap = true
	}
	j, err := m.store.Job(ctx, id)
	if err != nil {
		return nil, false, false, err
	}
	snap, _ := json.Marshal(struct {
		State    string
		Progress *api.Progress
		Attempt  int
	}{j.State, j.Progress, j.Attempt})
	full = len(evs) == followBatch
	done = api.Terminal(j.State) && j.LastSeq <= f.after && !full
	if string(snap) != string(f.lastSnap) || (done && f.eventsSinceSnap) {
		f.lastSnap, f.eventsSinceSnap = snap, false
		items = append(items, api.StreamItem{Job: &j})
	}
	return items, full, done, nil
}
