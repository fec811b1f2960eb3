package server

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/jobs"
	"github.com/mass-dev/mass/daemon/store"
	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/jobkind"
)

func newTestServer(t testing.TB) (*Server, string) {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(context.Background(), filepath.Join(dir, "massd.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	log := slog.New(slog.DiscardHandler)
	m, err := jobs.NewManager(jobs.Options{Store: st, Kinds: []jobkind.Kind{jobs.WaitKind()}, Layout: datadir.New(dir), Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(context.Background()) })
	return New(Options{Store: st, Jobs: m, Layout: datadir.New(dir), Version: "test", Logger: log}), dir
}

func do(t *testing.T, h http.Handler, method, path string, body io.Reader, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, body)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestEpisodeFiles(t *testing.T) {
	s, dir := newTestServer(t)
	h := s.Handler()
	ep := filepath.Join(dir, "episodes", "ep-1")
	for _, d := range []string{filepath.Join(ep, "manifests"), filepath.Join(dir, "episodes", "ep-link-target")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, body string) {
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(ep, "episode.json"), `{"episode_id":"ep-1"}`)
	write(filepath.Join(ep, "manifests", "worker-1.json"), `[]`)
	write(filepath.Join(ep, "secret.txt"), "no")
	write(filepath.Join(dir, "outside.json"), "host file")
	if err := os.Symlink(filepath.Join(dir, "outside.json"), filepath.Join(ep, "run_status.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "outside.json"), filepath.Join(ep, "manifests", "evil.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(ep, filepath.Join(dir, "episodes", "ep-2")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(ep, "ledger.jsonl"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(ep, "workspace.tar"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path     string
		wantCode int
		wantBody string
	}{
		{"/v1/episodes/ep-1/files/episode.json", 200, `{"episode_id":"ep-1"}`},
		{"/v1/episodes/ep-1/files/manifests/worker-1.json", 200, `[]`},
		{"/v1/episodes/ep-1/files/secret.txt", 404, "not served"},
		{"/v1/episodes/ep-1/files/run_status.json", 404, "not a plain file"},
		{"/v1/episodes/ep-1/files/manifests/evil.json", 404, "not a plain file"},
		{"/v1/episodes/ep-2/files/episode.json", 404, "not a plain file"},
		{"/v1/episodes/ep-1/files/ledger.jsonl", 404, "not a regular file"},
		{"/v1/episodes/ep-1/files/workspace.tar", 404, "not a regular file"},
		{"/v1/episodes/ep-1/files/manifests/../episode.json", 307, ""}, // the mux cleans the path,
		{"/v1/episodes/..%2Foutside/files/episode.json", 400, "not valid"},
		{"/v1/episodes/ep-1/files/manifests/sub/x.json", 404, "not served"},
		{"/v1/episodes/ep-9/files/episode.json", 404, "ep-9"},
	}
	for _, tt := range tests {
		rec := do(t, h, "GET", tt.path, nil)
		if got, want := rec.Code, tt.wantCode; got != want {
			t.Errorf("%s: code = %d, want %d (%s)", tt.path, got, want, rec.Body)
			continue
		}
		if !strings.Contains(rec.Body.String(), tt.wantBody) {
			t.Errorf("%s: body = %q, want it to contain %q", tt.path, rec.Body, tt.wantBody)
		}
		if strings.Contains(rec.Body.String(), "host file") {
			t.Errorf("%s: served a file outside the episode", tt.path)
		}
	}
}

type entry struct {
	name     string
	typ      byte
	body     string
	linkname string
}

func tarOf(t testing.TB, entries ...entry) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Typeflag: e.typ, Mode: 0o644, Size: int64(len(e.body)), Linkname: e.linkname}
		if e.typ != tar.TypeReg {
			h.Size = 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if e.typ == tar.TypeReg {
			tw.Write([]byte(e.body))
		}
	}
	tw.Close()
	return &buf
}

const specDoc = "id: up1\nprompt: p\ninputs: [data]\nprotected_paths: [data]\nlimits: {episode_wall_time: 1m, agent_turns: 3}\n"

func TestAddTaskUpload(t *testing.T) {
	s, dir := newTestServer(t)
	h := s.Handler()
	tests := []struct {
		name     string
		body     *bytes.Buffer
		wantCode int
		wantMsg  string
	}{
		{"traversal", tarOf(t, entry{name: "spec.yaml", typ: tar.TypeReg, body: specDoc}, entry{name: "../evil", typ: tar.TypeReg, body: "x"}), 400, "clean relative path"},
		{"absolute", tarOf(t, entry{name: "/etc/evil", typ: tar.TypeReg, body: "x"}), 400, "clean relative path"},
		{"symlink", tarOf(t, entry{name: "spec.yaml", typ: tar.TypeReg, body: specDoc}, entry{name: "data", typ: tar.TypeSymlink, linkname: "/etc"}), 400, "not a regular file"},
		{"no spec", tarOf(t, entry{name: "data/x", typ: tar.TypeReg, body: "x"}), 400, "no spec.yaml"},
		{"missing input", tarOf(t, entry{name: "spec.yaml", typ: tar.TypeReg, body: specDoc}), 400, "inputs[0].path"},
		{"bad spec", tarOf(t, entry{name: "spec.yaml", typ: tar.TypeReg, body: "id: x\n"}), 400, "prompt"},
		{"not tar", bytes.NewBufferString("hello"), 400, "read task upload"},
		{"file then dir", tarOf(t, entry{name: "spec.yaml", typ: tar.TypeReg, body: specDoc}, entry{name: "data", typ: tar.TypeReg, body: "x"}, entry{name: "data/a.csv", typ: tar.TypeReg, body: "y"}), 400, "collides"},
		{"ok", tarOf(t, entry{name: "spec.yaml", typ: tar.TypeReg, body: specDoc}, entry{name: "data/a.csv", typ: tar.TypeReg, body: "a,b\n"}), 201, `"id":"up1"`},
		{"duplicate", tarOf(t, entry{name: "spec.yaml", typ: tar.TypeReg, body: specDoc}, entry{name: "data/a.csv", typ: tar.TypeReg, body: "a,b\n"}), 409, "already exists"},
	}
	for _, tt := range tests {
		rec := do(t, h, "POST", "/v1/tasks", tt.body)
		if got, want := rec.Code, tt.wantCode; got != want {
			t.Errorf("%s: code = %d, want %d (%s)", tt.name, got, want, rec.Body)
			continue
		}
		if !strings.Contains(rec.Body.String(), tt.wantMsg) {
			t.Errorf("%s: body %q does not contain %q", tt.name, rec.Body, tt.wantMsg)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "evil")); !os.IsNotExist(err) {
		t.Errorf("traversal wrote outside the upload dir: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "tasks", "up1", "data", "a.csv"))
	if err != nil || string(b) != "a,b\n" {
		t.Errorf("stored input = %q, %v", b, err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "tasks", ".incoming-*"))
	if len(left) != 0 {
		t.Errorf("incoming dirs left behind: %v", left)
	}
}

func TestTokenAuth(t *testing.T) {
	s, _ := newTestServer(t)
	h := s.TokenHandler("0123456789abcdef0123")
	tests := []struct {
		name, auth string
		want       int
	}{
		{"none", "", 401},
		{"wrong", "Bearer nope", 401},
		{"basic", "Basic 0123456789abcdef0123", 401},
		{"right", "Bearer 0123456789abcdef0123", 200},
	}
	for _, tt := range tests {
		rec := do(t, h, "GET", "/v1/healthz", nil, "Authorization", tt.auth)
		if got := rec.Code; got != tt.want {
			t.Errorf("%s: code = %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestJobsAPIAndMetrics(t *testing.T) {
	s, _ := newTestServer(t)
	h := s.Handler()
	rec := do(t, h, "POST", "/v1/jobs", strings.NewReader(`{"kind":"wait","params":{"seconds":0.05,"interval_ms":10}}`))
	if rec.Code != 201 {
		t.Fatalf("submit: %d %s", rec.Code, rec.Body)
	}
	var j api.Job
	if err := json.Unmarshal(rec.Body.Bytes(), &j); err != nil {
		t.Fatal(err)
	}
	// follow=1 returns once the job ends, with every event and a final snapshot.
	rec = do(t, h, "GET", "/v1/jobs/"+j.ID+"/events?follow=1", nil)
	lines := strings.Split(strings.TrimSpace(rec.Body.String()), "\n")
	var last api.StreamItem
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil {
		t.Fatal(err)
	}
	if last.Job == nil || last.Job.State != api.StateSucceeded {
		t.Errorf("last stream item = %s, want a succeeded job", lines[len(lines)-1])
	}
	for _, tt := range []struct {
		method, path, body string
		want               int
	}{
		{"GET", "/v1/jobs/nope", "", 404},
		{"POST", "/v1/jobs", `{"kind":"wait","bogus":1}`, 400},
		{"POST", "/v1/jobs", `{"kind":"nope"}`, 400},
		{"POST", "/v1/jobs/" + j.ID + "/cancel", "", 409},
		{"GET", "/v1/jobs?limit=x", "", 400},
		{"GET", "/v1/nothing", "", 404},
		{"DELETE", "/v1/jobs/" + j.ID, "", 405},
	} {
		if rec := do(t, h, tt.method, tt.path, strings.NewReader(tt.body)); rec.Code != tt.want {
			t.Errorf("%s %s: code = %d, want %d (%s)", tt.method, tt.path, rec.Code, tt.want, rec.Body)
		}
	}
	body := do(t, h, "GET", "/metrics", nil).Body.String()
	for _, want := range []string{
		`mass_jobs{state="succeeded"} 1`,
		`mass_build_info{version="test"`,
		`mass_api_request_duration_seconds_bucket{route="POST /v1/jobs",le="+Inf"} 3`,
		`mass_api_requests_total{route="GET /v1/jobs/{id}",code="404"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q:\n%s", want, body)
		}
	}
}
