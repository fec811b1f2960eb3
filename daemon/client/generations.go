package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/mass-dev/mass/daemon/api"
)

// Generations returns every generation's generation.json, by number.
func (c *Client) Generations(ctx context.Context) ([]json.RawMessage, error) {
	var gs []json.RawMessage
	err := c.getJSON(ctx, "/v1/generations", nil, &gs)
	return gs, err
}

// Generation returns generation g's generation.json.
func (c *Client) Generation(ctx context.Context, g int) (json.RawMessage, error) {
	var b json.RawMessage
	err := c.getJSON(ctx, fmt.Sprintf("/v1/generations/%d", g), nil, &b)
	return b, err
}

// RemoveGeneration deletes generation g's directory and unregisters its
// model; api.ErrConflict while its job is queued or running.
func (c *Client) RemoveGeneration(ctx context.Context, g int) (api.GenerationRemoval, error) {
	var out api.GenerationRemoval
	err := c.sendJSON(ctx, http.MethodDelete, fmt.Sprintf("/v1/generations/%d", g), nil, &out)
	return out, err
}

// RetryGeneration queues generation g's failed job again; it resumes from
// the generation's last finished stage.
func (c *Client) RetryGeneration(ctx context.Context, g int) (api.Job, error) {
	var j api.Job
	err := c.sendJSON(ctx, http.MethodPost, fmt.Sprintf("/v1/generations/%d/retry", g), nil, &j)
	return j, err
}
