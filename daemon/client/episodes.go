package client

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/mass-dev/mass/daemon/api"
)

// EpisodeFilter selects episodes; zero fields match everything.
type EpisodeFilter struct {
	JobID  string
	TaskID string
	Status string
	Limit  int
}

// Episodes lists episodes, newest first.
func (c *Client) Episodes(ctx context.Context, f EpisodeFilter) ([]api.Episode, error) {
	q := url.Values{}
	set(q, "job", f.JobID)
	set(q, "task", f.TaskID)
	set(q, "status", f.Status)
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	var es []api.Episode
	err := c.getJSON(ctx, "/v1/episodes", q, &es)
	return es, err
}

// Episode returns one episode.
func (c *Client) Episode(ctx context.Context, id string) (api.Episode, error) {
	var e api.Episode
	err := c.getJSON(ctx, "/v1/episodes/"+url.PathEscape(id), nil, &e)
	return e, err
}

// EpisodeFile opens one file of an episode: episode.json, api_requests.jsonl,
// ledger.jsonl, run_status.json, workspace.manifest.json, workspace.tar or
// manifests/<agent>.json. The caller closes it.
func (c *Client) EpisodeFile(ctx context.Context, id, name string) (io.ReadCloser, error) {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	req, err := c.newRequest(ctx, http.MethodGet, "/v1/episodes/"+url.PathEscape(id)+"/files/"+strings.Join(parts, "/"), nil, nil, "")
	if err != nil {
		return nil, err
	}
	resp, err := c.do(c.stream, req)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// EpisodeFiles lists the files massd serves of an episode.
func (c *Client) EpisodeFiles(ctx context.Context, id string) ([]api.EpisodeFile, error) {
	var fs []api.EpisodeFile
	err := c.getJSON(ctx, "/v1/episodes/"+url.PathEscape(id)+"/files", nil, &fs)
	return fs, err
}

// RemoveEpisode deletes an episode's record and directory; a running
// episode is refused with api.ErrConflict.
func (c *Client) RemoveEpisode(ctx context.Context, id string) (api.Episode, error) {
	var e api.Episode
	err := c.sendJSON(ctx, http.MethodDelete, "/v1/episodes/"+url.PathEscape(id), nil, &e)
	return e, err
}

// Models lists the models massd can call.
func (c *Client) Models(ctx context.Context) ([]api.Model, error) {
	var ms []api.Model
	err := c.getJSON(ctx, "/v1/models", nil, &ms)
	return ms, err
}

// TestModel asks massd to send the named model one small request.
func (c *Client) TestModel(ctx context.Context, name string) (api.ModelTest, error) {
	var res api.ModelTest
	err := c.sendJSON(ctx, http.MethodPost, "/v1/models/"+url.PathEscape(name)+"/test", nil, &res)
	return res, err
}
