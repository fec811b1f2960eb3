package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/store"
)

// EpisodeCloser ends the store row of an episode a crash cut off: the row
// takes e's status and summary and, when ev has a type, ev is appended to
// the episode's job, in one transaction, unless the row already ended
// (closing twice changes nothing). It reports whether it changed the row.
// The manager and the reporters it hands to Run implement it.
type EpisodeCloser interface {
	CloseEpisode(ctx context.Context, e EpisodeRecord, ev Event) (bool, error)
}

// Event is an event written together with an episode's row.
type Event struct {
	Type    string
	Message string
	Fields  map[string]any
}

var (
	_ EpisodeCloser = (*Manager)(nil)
	_ EpisodeCloser = (*reporter)(nil)
)

// CloseEpisode implements EpisodeCloser for start-up recovery.
func (m *Manager) CloseEpisode(ctx context.Context, e EpisodeRecord, ev Event) (bool, error) {
	ae := api.Episode{ID: e.ID, JobID: e.JobID, TaskID: e.TaskID, Status: e.Status, Dir: e.Dir}
	if e.Summary != nil {
		b, err := json.Marshal(e.Summary)
		if err != nil {
			return false, fmt.Errorf("encode episode summary: %w", err)
		}
		ae.Summary = b
	}
	changed, err := m.store.CloseEpisode(ctx, ae, store.EventInput{Type: ev.Type, Message: ev.Message, Fields: ev.Fields}, time.Now())
	if changed && e.JobID != "" {
		m.hub.notify(e.JobID)
	}
	return changed, err
}

// CloseEpisode implements EpisodeCloser for a running job: the episode's
// job defaults to this one.
func (r *reporter) CloseEpisode(ctx context.Context, e EpisodeRecord, ev Event) (bool, error) {
	if e.JobID == "" {
		e.JobID = r.id
	}
	changed, err := r.m.CloseEpisode(ctx, e, ev)
	r.m.hub.notify(r.id)
	return changed, err
}

// Recovery is what start-up recovery needs from the manager: the episode
// rows a crash left "running" and the close path for their rows.
type Recovery interface {
	EpisodeCloser
	RunningEpisodes(ctx context.Context) ([]EpisodeRecord, error)
}

var _ Recovery = (*Manager)(nil)

// RunningEpisodes are the episode rows still "running": at start-up, before
// any job runs, the episodes a crash cut off.
func (m *Manager) RunningEpisodes(ctx context.Context) ([]EpisodeRecord, error) {
	eps, err := m.store.Episodes(ctx, store.EpisodeFilter{Status: api.StateRunning, Limit: 1 << 20})
	if err != nil {
		return nil, err
	}
	out := make([]EpisodeRecord, 0, len(eps))
	for _, e := range eps {
		out = append(out, EpisodeRecord{ID: e.ID, JobID: e.JobID, TaskID: e.TaskID, Status: e.Status, Dir: e.Dir})
	}
	return out, nil
}
