package client

import (
	"context"
	"encoding/json"
	"fmt"
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
