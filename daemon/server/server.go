// Package server is massd's HTTP API (/v1 over a unix socket, optionally TCP
// with a bearer token): a thin layer that decodes requests, calls the job
// manager and the store, and maps error classes to status codes.
package server

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mass-dev/mass/agents/grade"
	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/catalog"
	"github.com/mass-dev/mass/daemon/jobs"
	"github.com/mass-dev/mass/daemon/store"
	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/taskspec"
)

// MaxJSONBody caps JSON request bodies.
const MaxJSONBody = 1 << 20

// Options configure a Server.
type Options struct {
	Store  *store.Store
	Jobs   *jobs.Manager
	Layout datadir.Layout
	// Tasks is the task catalog; nil means one over Store and Layout.
	Tasks *catalog.Catalog
	// Models lists the models massd can call (GET /v1/models); nil lists none.
	Models func() []api.Model
	// UnregisterModels takes a removed generation's models out of the
	// models massd calls; nil: the store's rows only.
	UnregisterModels func(names []string)
	// TestModel runs POST /v1/models/{name}/test; nil answers 503.
	TestModel func(ctx context.Context, name string) (api.ModelTest, error)
	// GradeTask runs a task's grader on export (a tar of workspace-relative
	// files) in the box an episode's grade gets; nil answers 503.
	GradeTask func(ctx context.Context, spec *taskspec.Spec, export io.Reader) (grade.Grade, error)
	// Recovering reports start-up recovery while it runs and nil after;
	// nil means none.
	Recovering func() *api.Recovery
	// Engine pings the sandbox engine for healthz; nil leaves it out.
	Engine   func(ctx context.Context) *api.EngineHealth
	Version  string
	DaemonID string
	Logger   *slog.Logger
}

// Server serves the API. Create it with New.
type Server struct {
	o       Options
	started time.Time
	log     *slog.Logger
	metrics *metrics
	mux     *http.ServeMux
	tasks   *catalog.Catalog
}

// New builds the routes.
func New(o Options) *Server {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	s := &Server{o: o, started: time.Now().UTC(), log: o.Logger.With("component", "api"), metrics: newMetrics(), mux: http.NewServeMux(), tasks: o.Tasks}
	if s.tasks == nil {
		s.tasks = catalog.New(o.Store, o.Layout, s.log)
	}
	routes := []struct {
		pattern string
		h       func(http.ResponseWriter, *http.Request) error
	}{
		{"GET /v1/healthz", s.health},
		{"GET /metrics", s.serveMetrics},
		{"GET /v1/tasks", s.listTasks},
		{"POST /v1/tasks", s.addTask},
		{"POST /v1/tasks/validate", s.validateTask},
		{"POST /v1/tasks/grade", s.gradeTask},
		{"GET /v1/tasks/{id}", s.getTask},
		{"GET /v1/jobs", s.listJobs},
		{"POST /v1/jobs", s.submitJob},
		{"GET /v1/jobs/{id}", s.getJob},
		{"POST /v1/jobs/{id}/cancel", s.cancelJob},
		{"POST /v1/jobs/{id}/retry", s.retryJob},
		{"GET /v1/jobs/{id}/events", s.jobEvents},
		{"GET /v1/episodes", s.listEpisodes},
		{"GET /v1/episodes/{id}", s.getEpisode},
		{"DELETE /v1/episodes/{id}", s.removeEpisode},
		{"GET /v1/episodes/{id}/files", s.listEpisodeFiles},
		{"GET /v1/episodes/{id}/files/{name...}", s.episodeFile},
		{"GET /v1/episodes/{id}/workspace/{path...}", s.workspaceFile},
		{"DELETE /v1/episodes/{id}/workspace", s.removeWorkspace},
		{"GET /v1/searches", s.listSearches},
		{"GET /v1/searches/{task}/{id}", s.getSearch},
		{"GET /v1/searches/{task}/{id}/files/{name...}", s.searchFile},
		{"GET /v1/generations/{g}/files/{name...}", s.generationFile},
		{"DELETE /v1/tasks/{id}", s.removeTask},
		{"PUT /v1/tasks/{id}", s.updateTask},
		{"GET /v1/models", s.listModels},
		{"GET /v1/generations", s.listGenerations},
		{"GET /v1/generations/{g}", s.getGeneration},
		{"DELETE /v1/generations/{g}", s.removeGeneration},
		{"POST /v1/generations/{g}/retry", s.retryGeneration},
		{"GET /v1/report", s.getReport},
		{"POST /v1/models/{name}/test", s.testModel},
	}
	for _, r := range routes {
		s.mux.Handle(r.pattern, s.wrap(r.h))
	}
	s.mux.Handle("/", s.wrap(s.noRoute))
	return s
}

// noRoute answers 405 with an Allow header when the path exists under
// other methods, else 404.
func (s *Server) noRoute(w http.ResponseWriter, r *http.Request) error {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := s.mux.Handler(probe); pattern != "/" && pattern != "" {
			allow = append(allow, m)
		}
	}
	if len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		return writeJSON(w, http.StatusMethodNotAllowed, api.ErrorBody{
			Error: fmt.Sprintf("%s is not allowed on %s; use %s", r.Method, r.URL.Path, strings.Join(allow, " or ")), Code: "method_not_allowed"})
	}
	return fmt.Errorf("no route %s %s; see the API reference in README.md: %w", r.Method, r.URL.Path, api.ErrNotFound)
}

// Handler serves the API without authentication (for the 0600 unix socket).
func (s *Server) Handler() http.Handler { return s.metrics.instrument(s.mux) }

// TokenHandler serves the API to clients presenting "Authorization: Bearer
// token" (for the TCP listener); NewTokenHTTPServer serves it with the
// token checked before the body limits.
func (s *Server) TokenHandler(token string) http.Handler { return RequireToken(token, s.Handler()) }

// AuthFailureWriteTimeout bounds writing the 401 to a client without the
// token.
const AuthFailureWriteTimeout = 10 * time.Second

// RequireToken passes on requests with "Authorization: Bearer token" and
// answers any other 401 and closes its connection at once: the read
// deadline is set to now, so net/http does not wait for (drain) a declared
// body it never reads, which would keep the connection slot for the body
// timeout. Nothing of the body is read and no route limit is told.
func RequireToken(token string, next http.Handler) http.Handler {
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if token == "" || subtle.ConstantTimeCompare(got, want) != 1 {
			rc := http.NewResponseController(w)
			rc.SetReadDeadline(time.Now())
			rc.SetWriteDeadline(time.Now().Add(AuthFailureWriteTimeout))
			w.Header().Set("Connection", "close")
			writeError(w, fmt.Errorf("missing or wrong bearer token: %w", api.ErrUnauthorized))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) wrap(h func(http.ResponseWriter, *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			if status, _ := api.StatusOf(err); status >= 500 && !errors.Is(err, context.Canceled) {
				s.log.Error("request", "method", r.Method, "path", r.URL.Path, "err", err)
			}
			writeError(w, err)
		}
	})
}

func writeError(w http.ResponseWriter, err error) {
	status, code := api.StatusOf(err)
	writeJSON(w, status, api.ErrorBody{Error: err.Error(), Code: code})
}

func writeJSON(w http.ResponseWriter, status int, v any) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	return json.NewEncoder(w).Encode(v)
}

// decodeJSON decodes r's body into v; a body over MaxJSONBody is
// ErrTooLarge (not cut short into a syntax error), a malformed one ErrInvalid.
func decodeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, MaxJSONBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("request body: %v: %w", err, bodyClass(err))
	}
	// One JSON value, nothing after it but white space.
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("request body: trailing data after the JSON value: %w", api.ErrInvalid)
	}
	return nil
}

func queryInt(r *http.Request, name string) (int64, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("query %s=%q must be a non-negative integer: %w", name, v, api.ErrInvalid)
	}
	return n, nil
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) error {
	counts, err := s.o.Store.CountByState(r.Context())
	if err != nil {
		return err
	}
	h := api.Health{
		Status: "ok", Version: s.o.Version, DaemonID: s.o.DaemonID, Started: s.started,
		DataDir: s.o.Layout.Root, Kinds: s.o.Jobs.KindNames(), Jobs: counts,
	}
	if d, err := s.o.Jobs.Disk(); err == nil {
		h.Disk = &api.DiskHealth{FreeBytes: d.FreeBytes, MinFreeBytes: d.MinFreeBytes, Low: d.Low}
		if d.Low {
			h.Status = "low_disk"
		}
	}
	if s.o.Engine != nil {
		h.Engine = s.o.Engine(r.Context())
	}
	if s.o.Recovering != nil {
		if rec := s.o.Recovering(); rec != nil {
			h.Status, h.Recovery = "recovering", rec
		}
	}
	return writeJSON(w, http.StatusOK, h)
}

func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) error {
	counts, err := s.o.Store.CountByState(r.Context())
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	var b strings.Builder
	s.metrics.write(&b, counts, s.o.Version, s.started)
	if s.o.Jobs != nil {
		if d, err := s.o.Jobs.Disk(); err == nil {
			writeDisk(&b, d)
		}
	}
	_, err = io.WriteString(w, b.String())
	return err
}
