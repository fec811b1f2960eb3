package client

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/mass-dev/mass/daemon/api"
)

// Searches lists workflow searches, newest first; task "" lists every task's.
func (c *Client) Searches(ctx context.Context, task string) ([]api.Search, error) {
	q := url.Values{}
	set(q, "task", task)
	var ss []api.Search
	err := c.getJSON(ctx, "/v1/searches", q, &ss)
	return ss, err
}

// Search returns one search: retained champion, versions and records.
func (c *Client) Search(ctx context.Context, task, id string) (api.Search, error) {
	var s api.Search
	err := c.getJSON(ctx, "/v1/searches/"+url.PathEscape(task)+"/"+url.PathEscape(id), nil, &s)
	return s, err
}

// SearchFile opens one file of a search directory, e.g.
// versions/multi_agent_design_v2.txt. The caller closes it.
func (c *Client) SearchFile(ctx context.Context, task, id, name string) (io.ReadCloser, error) {
	return c.openStream(ctx, "/v1/searches/"+url.PathEscape(task)+"/"+url.PathEscape(id)+"/files/"+escapePath(name))
}

// GenerationFile opens one file of generation g's directory, e.g.
// train/metrics.jsonl. The caller closes it.
func (c *Client) GenerationFile(ctx context.Context, g int, name string) (io.ReadCloser, error) {
	return c.openStream(ctx, fmt.Sprintf("/v1/generations/%d/files/", g)+escapePath(name))
}

// WorkspaceFile opens one regular file of an episode's exported workspace
// by its workspace-relative path (as workspace.manifest.json lists it).
// massd reads it out of workspace.tar; links are never followed. The
// caller closes it.
func (c *Client) WorkspaceFile(ctx context.Context, id, path string) (io.ReadCloser, error) {
	return c.openStream(ctx, "/v1/episodes/"+url.PathEscape(id)+"/workspace/"+escapePath(path))
}

// RemoveWorkspace deletes an episode's exported workspace and keeps its
// record and other files.
func (c *Client) RemoveWorkspace(ctx context.Context, id string) (api.WorkspaceRemoval, error) {
	var r api.WorkspaceRemoval
	err := c.sendJSON(ctx, http.MethodDelete, path.Join("/v1/episodes", url.PathEscape(id), "workspace"), nil, &r)
	return r, err
}

func (c *Client) openStream(ctx context.Context, path string) (io.ReadCloser, error) {
	req, err := c.newRequest(ctx, http.MethodGet, path, nil, nil, "")
	if err != nil {
		return nil, err
	}
	resp, err := c.do(c.stream, req)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

func escapePath(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return strings.Join(parts, "/")
}
