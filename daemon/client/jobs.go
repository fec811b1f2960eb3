package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/mass-dev/mass/daemon/api"
)

// JobFilter selects jobs in Jobs; zero fields match everything.
type JobFilter struct {
	State  string
	Kind   string
	TaskID string
	Limit  int
}

// SubmitJob queues a job.
func (c *Client) SubmitJob(ctx context.Context, req api.JobRequest) (api.Job, error) {
	var j api.Job
	err := c.sendJSON(ctx, http.MethodPost, "/v1/jobs", req, &j)
	return j, err
}

// Jobs lists jobs, newest first.
func (c *Client) Jobs(ctx context.Context, f JobFilter) ([]api.Job, error) {
	q := url.Values{}
	set(q, "state", f.State)
	set(q, "kind", f.Kind)
	set(q, "task", f.TaskID)
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	var js []api.Job
	err := c.getJSON(ctx, "/v1/jobs", q, &js)
	return js, err
}

// Job returns one job.
func (c *Client) Job(ctx context.Context, id string) (api.Job, error) {
	var j api.Job
	err := c.getJSON(ctx, "/v1/jobs/"+url.PathEscape(id), nil, &j)
	return j, err
}

// CancelJob asks massd to cancel a job.
func (c *Client) CancelJob(ctx context.Context, id string) (api.Job, error) {
	var j api.Job
	err := c.sendJSON(ctx, http.MethodPost, "/v1/jobs/"+url.PathEscape(id)+"/cancel", nil, &j)
	return j, err
}

// RetryJob queues a failed, cancelled or interrupted job again.
func (c *Client) RetryJob(ctx context.Context, id string) (api.Job, error) {
	var j api.Job
	err := c.sendJSON(ctx, http.MethodPost, "/v1/jobs/"+url.PathEscape(id)+"/retry", nil, &j)
	return j, err
}

// eventsPage is how many events Events asks for per request.
const eventsPage = 5000

// Events returns all of a job's recorded events with seq > after, fetching
// them page by page.
func (c *Client) Events(ctx context.Context, id string, after int64) ([]api.Event, error) {
	out := []api.Event{}
	for {
		q := url.Values{"limit": {strconv.Itoa(eventsPage)}}
		if after > 0 {
			q.Set("after", strconv.FormatInt(after, 10))
		}
		var page []api.Event
		if err := c.getJSON(ctx, "/v1/jobs/"+url.PathEscape(id)+"/events", q, &page); err != nil {
			return nil, err
		}
		out = append(out, page...)
		if len(page) < eventsPage {
			return out, nil
		}
		after = page[len(page)-1].Seq
	}
}

// ErrStop may be returned by a Follow callback to end the stream early
// without an error.
var ErrStop = errors.New("stop following")

// Follow streams a job's events with seq > after, and job snapshots when its
// state or progress changes, calling fn for each, until the job ends (nil),
// fn returns an error (returned, except ErrStop), or ctx is cancelled.
func (c *Client) Follow(ctx context.Context, id string, after int64, fn func(api.StreamItem) error) error {
	q := url.Values{"follow": {"1"}}
	if after > 0 {
		q.Set("after", strconv.FormatInt(after, 10))
	}
	req, err := c.newRequest(ctx, http.MethodGet, "/v1/jobs/"+url.PathEscape(id)+"/events", q, nil, "")
	if err != nil {
		return err
	}
	resp, err := c.do(c.stream, req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	finished := false // the server ends the stream after a final-state snapshot
	for sc.Scan() {
		var it api.StreamItem
		if err := json.Unmarshal(sc.Bytes(), &it); err != nil {
			return fmt.Errorf("decode event stream of %s: %w", id, err)
		}
		if it.Job != nil {
			finished = api.Terminal(it.Job.State)
		}
		if err := fn(it); err != nil {
			if errors.Is(err, ErrStop) {
				return nil
			}
			return err
		}
	}
	if err := sc.Err(); err != nil && !errors.Is(err, io.EOF) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("read event stream of %s: %w", id, err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if !finished {
		return fmt.Errorf("event stream of job %s ended before the job finished (did massd stop? check `massctl status`, then follow again): %w", id, api.ErrUnavailable)
	}
	return nil
}

func set(q url.Values, k, v string) {
	if v != "" {
		q.Set(k, v)
	}
}
