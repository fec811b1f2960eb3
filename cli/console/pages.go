package console

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/client"
)

// MaxEventsShown caps the events a job page lists (the newest ones).
const MaxEventsShown = 500

func (c *Console) jobs(ctx context.Context, r *http.Request) (view, error) {
	js, err := c.cl.Jobs(ctx, client.JobFilter{Limit: 100})
	if err != nil {
		return view{}, err
	}
	live := false
	for _, j := range js {
		live = live || !api.Terminal(j.State)
	}
	return view{name: "jobs", title: "jobs", refresh: live, data: js}, nil
}

func (c *Console) job(ctx context.Context, r *http.Request) (view, error) {
	id := r.PathValue("id")
	j, err := c.cl.Job(ctx, id)
	if err != nil {
		return view{}, err
	}
	evs, err := c.cl.Events(ctx, id, 0)
	if err != nil {
		return view{}, err
	}
	if len(evs) > MaxEventsShown {
		evs = evs[len(evs)-MaxEventsShown:]
	}
	eps, err := c.cl.Episodes(ctx, client.EpisodeFilter{JobID: id})
	if err != nil {
		return view{}, err
	}
	return view{name: "job", title: "job " + id, refresh: !api.Terminal(j.State),
		data: map[string]any{"Job": j, "Events": evs, "Episodes": eps, "Result": pretty(j.Result)}}, nil
}

func (c *Console) episodes(ctx context.Context, r *http.Request) (view, error) {
	es, err := c.cl.Episodes(ctx, client.EpisodeFilter{Limit: 200, TaskID: r.URL.Query().Get("task"), JobID: r.URL.Query().Get("job")})
	if err != nil {
		return view{}, err
	}
	return view{name: "episodes", title: "episodes", data: es}, nil
}

func (c *Console) episode(ctx context.Context, r *http.Request) (view, error) {
	id := r.PathValue("id")
	e, err := c.cl.Episode(ctx, id)
	if err != nil {
		return view{}, err
	}
	files, err := c.cl.EpisodeFiles(ctx, id)
	if err != nil && e.Status != "running" {
		files = nil // the record outlived its folder; show the record
	}
	return view{name: "episode", title: "episode " + id, refresh: e.Status == "running",
		data: map[string]any{"Episode": e, "Summary": pretty(e.Summary), "Files": files}}, nil
}

func (c *Console) file(ctx context.Context, r *http.Request) (view, error) {
	id, name := r.PathValue("id"), r.PathValue("name")
	if strings.HasSuffix(name, ".tar") {
		return view{}, fmt.Errorf("%s is an archive; fetch it with: massctl episode files %s %s > %s: %w", name, id, name, name, api.ErrInvalid)
	}
	rc, err := c.cl.EpisodeFile(ctx, id, name)
	if err != nil {
		return view{}, err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, MaxFileView+1))
	if err != nil {
		return view{}, fmt.Errorf("read %s: %w", name, err)
	}
	truncated := len(b) > MaxFileView
	if truncated {
		b = b[:MaxFileView]
	}
	text, truncated := capText(b, truncated)
	return view{name: "file", title: name + " of " + id,
		data: map[string]any{"ID": id, "Name": name, "Text": text, "Truncated": truncated, "Cap": MaxFileView}}, nil
}

// pretty indents a JSON document for display; "" when there is none.
func pretty(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return Visible(string(raw))
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // the template escapes; \u003c would only hide the text
	enc.SetIndent("", "  ")
	if enc.Encode(v) != nil {
		return Visible(string(raw))
	}
	return Visible(b.String())
}
