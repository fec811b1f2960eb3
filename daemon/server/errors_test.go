package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/client"
	"github.com/mass-dev/mass/errclass"
)

// The status each class of errclass has at the API (README: "The API maps
// every error class to its own status"). A class added to errclass.All
// without a row here fails the test, so no class falls back to 500.
var wantStatus = map[error]int{
	errclass.ErrNotFound:     http.StatusNotFound,
	errclass.ErrInvalid:      http.StatusBadRequest,
	errclass.ErrConflict:     http.StatusConflict,
	errclass.ErrUnavailable:  http.StatusServiceUnavailable,
	errclass.ErrUnauthorized: http.StatusUnauthorized,
	errclass.ErrTooLarge:     http.StatusRequestEntityTooLarge,
	errclass.ErrDenied:       http.StatusForbidden,
	errclass.ErrTimeout:      http.StatusGatewayTimeout,
	errclass.ErrClosed:       http.StatusServiceUnavailable,
}

// Every class crosses the socket both ways: a handler's error becomes its
// status and code (server), and the code becomes the same class again in
// massctl (client), so errors.Is matches there and no other class does.
func TestEveryClassCrossesTheAPI(t *testing.T) {
	s, _ := newTestServer(t)
	mux := http.NewServeMux()
	mux.Handle("GET /v1/jobs/{id}", s.wrap(func(w http.ResponseWriter, r *http.Request) error {
		for _, class := range errclass.All {
			if r.PathValue("id") == codeOf(class) {
				return fmt.Errorf("job %s: %w", r.PathValue("id"), class)
			}
		}
		return fmt.Errorf("job %s: no such class here", r.PathValue("id"))
	}))
	ts := httptest.NewServer(mux)
	defer ts.Close()
	c := client.NewTCP(ts.URL, "")
	for _, class := range errclass.All {
		want, ok := wantStatus[class]
		if !ok {
			t.Errorf("class %q has no status in wantStatus: decide its status, map it in daemon/api and add it here", class)
			continue
		}
		code := codeOf(class)
		_, err := c.Job(context.Background(), code)
		var ce *client.Error
		if !errors.As(err, &ce) {
			t.Errorf("%s: client error %v (%T), want a *client.Error", code, err, err)
			continue
		}
		if ce.Status != want || !errors.Is(err, class) || !strings.Contains(err.Error(), "job "+code) {
			t.Errorf("%s: client got %d %q (class %v), want %d, errors.Is %v", code, ce.Status, err, ce.Class, want, class)
		}
		for _, other := range errclass.All {
			if other != class && errors.Is(err, other) {
				t.Errorf("%s: the client's error also matches %v", code, other)
			}
		}
	}
	_, err := c.Job(context.Background(), "x")
	if ce := (*client.Error)(nil); !errors.As(err, &ce) || ce.Status != http.StatusInternalServerError || ce.Class != nil {
		t.Errorf("unclassed error: %v, want a 500 with no class", err)
	}
}

// A response that is not massd's error body (a proxy in front of the TCP
// listener) still keeps the class its status names.
func TestClientClassesAForeignErrorPage(t *testing.T) {
	for status, class := range map[int]error{
		http.StatusGatewayTimeout:        errclass.ErrTimeout,
		http.StatusServiceUnavailable:    errclass.ErrUnavailable,
		http.StatusRequestEntityTooLarge: errclass.ErrTooLarge,
		http.StatusForbidden:             errclass.ErrDenied,
		http.StatusBadGateway:            nil,
	} {
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(status)
			fmt.Fprintf(w, "<html>%s</html>", http.StatusText(status))
		}))
		_, err := client.NewTCP(ts.URL, "").Job(context.Background(), "j")
		ts.Close()
		var ce *client.Error
		if !errors.As(err, &ce) || ce.Status != status || ce.Class != class || !strings.Contains(err.Error(), http.StatusText(status)) {
			t.Errorf("%d page: %v (%+v), want class %v", status, err, ce, class)
		}
	}
}

// A body past its route's cap is 413 whether its length was declared
// (guard) or it streamed past the cap (chunked), never a 400 for a body
// cut short; the client reads it as ErrTooLarge.
func TestBodyOverCapIsTooLarge(t *testing.T) {
	s, _ := newTestServer(t)
	h := guard(s.Handler())
	big := `{"kind":"wait","params":{"x":"` + strings.Repeat("a", MaxJSONBody) + `"}}`
	for _, declared := range []bool{true, false} {
		req := httptest.NewRequest("POST", "/v1/jobs", strings.NewReader(big))
		if !declared {
			req.ContentLength = -1
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusRequestEntityTooLarge || !strings.Contains(rec.Body.String(), `"code":"too_large"`) {
			t.Errorf("declared %v: %d %s, want 413 too_large", declared, rec.Code, rec.Body)
		}
	}
	ts := httptest.NewServer(h)
	defer ts.Close()
	_, err := client.NewTCP(ts.URL, "").SubmitJob(context.Background(), api.JobRequest{Kind: "wait", Params: []byte(`{"x":"` + strings.Repeat("a", MaxJSONBody) + `"}`)})
	if !errors.Is(err, errclass.ErrTooLarge) {
		t.Errorf("client SubmitJob of a 1 MiB body: %v, want ErrTooLarge", err)
	}
}

func codeOf(class error) string { _, code := api.StatusOf(class); return code }
