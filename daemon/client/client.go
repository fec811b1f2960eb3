// Package client is the typed Go client of massd's /v1 API. It does all of
// massctl's HTTP; errors carry the api error classes (api.ErrNotFound, …)
// so callers can use errors.Is.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/mass-dev/mass/daemon/api"
)

// ErrNoDaemon means nothing answered on the socket or address.
var ErrNoDaemon = errors.New("massd is not running")

// Client talks to one massd. Safe for concurrent use.
type Client struct {
	base   string // http://massd or the TCP base URL
	token  string
	where  string // socket path or URL, for messages
	http   *http.Client
	stream *http.Client // no overall timeout, for follow streams
}

// New returns a client for the unix socket at path.
func New(socketPath string) *Client {
	dial := func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", socketPath)
	}
	tr := &http.Transport{DialContext: dial, MaxIdleConns: 16, MaxIdleConnsPerHost: 16, IdleConnTimeout: 90 * time.Second}
	return &Client{
		base:   "http://massd",
		where:  socketPath,
		http:   &http.Client{Transport: tr, Timeout: 5 * time.Minute},
		stream: &http.Client{Transport: tr},
	}
}

// NewTCP returns a client for massd's TCP listener at baseURL
// (e.g. http://host:7070) that authenticates with token.
func NewTCP(baseURL, token string) *Client {
	tr := &http.Transport{MaxIdleConns: 16, MaxIdleConnsPerHost: 16, IdleConnTimeout: 90 * time.Second}
	return &Client{
		base:   strings.TrimSuffix(baseURL, "/"),
		token:  token,
		where:  baseURL,
		http:   &http.Client{Transport: tr, Timeout: 5 * time.Minute},
		stream: &http.Client{Transport: tr},
	}
}

// Where is the socket path or URL this client uses.
func (c *Client) Where() string { return c.where }

func (c *Client) newRequest(ctx context.Context, method, path string, q url.Values, body io.Reader, ctype string) (*http.Request, error) {
	u := c.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, err
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	return req, nil
}

// do sends a request and returns the response if it is 2xx; otherwise the
// decoded API error.
func (c *Client) do(hc *http.Client, req *http.Request) (*http.Response, error) {
	resp, err := hc.Do(req)
	if err != nil {
		if isNoDaemon(err) {
			return nil, fmt.Errorf("%w at %s", ErrNoDaemon, c.where)
		}
		return nil, fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, err)
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	var eb api.ErrorBody
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if json.Unmarshal(data, &eb) != nil || eb.Error == "" {
		// Not massd's error body (a proxy's page): the status keeps the class.
		msg := fmt.Sprintf("%s %s: %s: %s", req.Method, req.URL.Path, resp.Status, strings.TrimSpace(string(data)))
		return nil, &Error{Msg: msg, Class: api.ClassOfStatus(resp.StatusCode), Status: resp.StatusCode}
	}
	return nil, &Error{Msg: eb.Error, Class: api.ClassOf(eb.Code), Status: resp.StatusCode}
}

// Error is an error reported by massd.
type Error struct {
	Msg    string
	Class  error // an api.Err* class, or nil
	Status int
}

func (e *Error) Error() string { return e.Msg }

// Unwrap lets errors.Is match the api error class.
func (e *Error) Unwrap() error { return e.Class }

func isNoDaemon(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT)
}

// getJSON GETs path and decodes the JSON response into out.
func (c *Client) getJSON(ctx context.Context, path string, q url.Values, out any) error {
	req, err := c.newRequest(ctx, http.MethodGet, path, q, nil, "")
	if err != nil {
		return err
	}
	return c.decode(req, out)
}

func (c *Client) sendJSON(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := c.newRequest(ctx, method, path, nil, body, "application/json")
	if err != nil {
		return err
	}
	return c.decode(req, out)
}

func (c *Client) decode(req *http.Request, out any) error {
	resp, err := c.do(c.http, req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("decode %s %s response: %w", req.Method, req.URL.Path, err)
	}
	return nil
}

// Health returns GET /v1/healthz.
func (c *Client) Health(ctx context.Context) (api.Health, error) {
	var h api.Health
	err := c.getJSON(ctx, "/v1/healthz", nil, &h)
	return h, err
}

// Metrics returns the Prometheus text of GET /metrics.
func (c *Client) Metrics(ctx context.Context) (string, error) {
	req, err := c.newRequest(ctx, http.MethodGet, "/metrics", nil, nil, "")
	if err != nil {
		return "", err
	}
	resp, err := c.do(c.http, req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}
