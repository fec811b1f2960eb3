package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/store"
	"github.com/mass-dev/mass/jobkind"
)

var (
	_ jobkind.EpisodeCloser = (*Manager)(nil)
	_ jobkind.EpisodeCloser = (*reporter)(nil)
)

// CloseEpisode implements EpisodeCloser for start-up recovery.
func (m *Manager) CloseEpisode(ctx context.Context, e jobkind.EpisodeRecord, ev jobkind.Event) (bool, error) {
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
func (r *reporter) CloseEpisode(ctx context.Context, e jobkind.EpisodeRecord, ev jobkind.Event) (bool, error) {
	if e.JobID == "" {
		e.JobID = r.id
	}
	changed, err := r.m.CloseEpisode(ctx, e, ev)
	r.m.hub.notify(r.id)
	return changed, err
}

var _ jobkind.Recovery = (*Manager)(nil)

// RunningEpisodes are the episode rows still "running": at start-up, before
// any job runs, the episodes a crash cut off.
func (m *Manager) RunningEpisodes(ctx context.Context) ([]jobkind.EpisodeRecord, error) {
	eps, err := m.store.Episodes(ctx, store.EpisodeFilter{Status: api.StateRunning, Limit: 1 << 20})
	if err != nil {
		return nil, err
	}
	out := make([]jobkind.EpisodeRecord, 0, len(eps))
	for _, e := range eps {
		out = append(out, jobkind.EpisodeRecord{ID: e.ID, JobID: e.JobID, TaskID: e.TaskID, Status: e.Status, Dir: e.Dir})
	}
	return out, nil
}
