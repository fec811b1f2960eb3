package client

import (
	"context"
	"net/url"

	"github.com/mass-dev/mass/cycle/report"
)

// Report returns the evaluation report of the generations (numbers or
// model names) in evaluation eval ("" = the newest).
func (c *Client) Report(ctx context.Context, eval string, gens []string) (*report.Report, error) {
	q := url.Values{}
	if eval != "" {
		q.Set("eval", eval)
	}
	for _, g := range gens {
		q.Add("gen", g)
	}
	var r report.Report
	if err := c.getJSON(ctx, "/v1/report", q, &r); err != nil {
		return nil, err
	}
	return &r, nil
}
