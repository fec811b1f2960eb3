package jobs

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/jobkind"
)

// reporter writes a running job's events, progress, result and episodes to
// the store. Store errors are logged, not returned: a job's work must not
// fail because a progress line could not be written.
type reporter struct {
	m   *Manager
	id  string
	log *slog.Logger
}

var _ jobkind.Reporter = (*reporter)(nil)

func (r *reporter) ctx() context.Context { return context.Background() }

func (r *reporter) Event(typ, msg string, fields map[string]any) {
	if _, err := r.m.store.AppendEvent(r.ctx(), r.id, typ, msg, fields, time.Now()); err != nil {
		r.log.Error("record event", "type", typ, "err", err)
	}
	r.m.hub.notify(r.id)
}

func (r *reporter) Progress(p jobkind.Progress) {
	if err := r.m.store.SetProgress(r.ctx(), r.id, p); err != nil {
		r.log.Error("record progress", "err", err)
	}
	r.m.hub.notify(r.id)
}

func (r *reporter) SetResult(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		r.log.Error("encode result", "err", err)
		return
	}
	if err := r.m.store.SetResult(r.ctx(), r.id, b); err != nil {
		r.log.Error("record result", "err", err)
	}
}

func (r *reporter) Episode(e jobkind.EpisodeRecord) {
	ae := api.Episode{ID: e.ID, JobID: e.JobID, TaskID: e.TaskID, Status: e.Status, Dir: e.Dir}
	if ae.JobID == "" {
		ae.JobID = r.id
	}
	if e.Summary != nil {
		b, err := json.Marshal(e.Summary)
		if err != nil {
			r.log.Error("encode episode summary", "episode", e.ID, "err", err)
		} else {
			ae.Summary = b
		}
	}
	if err := r.m.store.UpsertEpisode(r.ctx(), ae, time.Now()); err != nil {
		r.log.Error("record episode", "episode", e.ID, "err", err)
	}
	r.m.hub.notify(r.id)
}

func (r *reporter) Logger() *slog.Logger { return r.log }
