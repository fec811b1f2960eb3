package server

import (
	"archive/tar"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mass-dev/mass/daemon/api"
)

// TestWorkspaceFile serves a regular file out of workspace.tar by its
// workspace path and refuses links, unclean paths and an export that is
// itself a link; nothing outside the episode is ever read.
func TestWorkspaceFile(t *testing.T) {
	s, dir := newTestServer(t)
	h := s.Handler()
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte("host secret"), 0o600)
	ep := filepath.Join(dir, "episodes", "e-1")
	os.MkdirAll(ep, 0o750)
	tb := tarOf(t, entry{name: "out/", typ: tar.TypeDir}, entry{name: "out/a.txt", typ: tar.TypeReg, body: "hello"},
		entry{name: "ln", typ: tar.TypeSymlink, linkname: secret})
	os.WriteFile(filepath.Join(ep, "workspace.tar"), tb.Bytes(), 0o640)
	if rr := do(t, h, "GET", "/v1/episodes/e-1/workspace/out/a.txt", nil); rr.Code != http.StatusOK || rr.Body.String() != "hello" {
		t.Errorf("a.txt: %d %q", rr.Code, rr.Body)
	}
	for p, code := range map[string]int{
		"/v1/episodes/e-1/workspace/ln":                     http.StatusNotFound,
		"/v1/episodes/e-1/workspace/out":                    http.StatusNotFound,
		"/v1/episodes/e-1/workspace/none":                   http.StatusNotFound,
		"/v1/episodes/e-1/workspace/out/../out/a.txt":       http.StatusTemporaryRedirect, // the mux cleans paths
		"/v1/episodes/e-1/workspace/out%2F..%2Fout%2Fa.txt": http.StatusBadRequest,
		"/v1/episodes/e-1/workspace/out%2F%2Fa.txt":         http.StatusBadRequest,
		"/v1/episodes/..%2Fx/workspace/a":                   http.StatusBadRequest,
	} {
		rr := do(t, h, "GET", p, nil)
		if rr.Code != code || strings.Contains(rr.Body.String(), "host secret") {
			t.Errorf("%s: %d %s, want %d", p, rr.Code, rr.Body, code)
		}
	}
	ep2 := filepath.Join(dir, "episodes", "e-2")
	os.MkdirAll(ep2, 0o750)
	os.Symlink(filepath.Join(ep, "workspace.tar"), filepath.Join(ep2, "workspace.tar"))
	if rr := do(t, h, "GET", "/v1/episodes/e-2/workspace/out/a.txt", nil); rr.Code != http.StatusNotFound {
		t.Errorf("an export that is a link was followed: %d %s", rr.Code, rr.Body)
	}
}

// TestSearchesAPI lists and shows a search from its files and serves its
// files without following a link planted among them.
func TestSearchesAPI(t *testing.T) {
	s, dir := newTestServer(t)
	h := s.Handler()
	sd := filepath.Join(dir, "search", "t1", "j-1")
	for _, d := range []string{"versions", "records"} {
		os.MkdirAll(filepath.Join(sd, d), 0o750)
	}
	files := map[string]string{
		"versions/multi_agent_design_v0.txt": "v0", "versions/multi_agent_design_v2.txt": "v2", "versions/notes.txt": "x",
		"records/comparison_history.jsonl": `{"candidate":"v2","outcome":"win"}` + "\nnot json\n",
		"records/champion_history.jsonl":   `{"version":0}` + "\n",
		"retained_workflow.json":           `{"version":2,"beats_reference":true}`,
	}
	for n, b := range files {
		os.WriteFile(filepath.Join(sd, n), []byte(b), 0o640)
	}
	os.WriteFile(filepath.Join(dir, "search", "t1", "champion.json"), []byte("{}"), 0o640)
	os.Symlink("/etc/passwd", filepath.Join(sd, "versions", "multi_agent_design_v9.txt"))
	rr := do(t, h, "GET", "/v1/searches", nil)
	var list []api.Search
	if err := json.Unmarshal(rr.Body.Bytes(), &list); err != nil || len(list) != 1 || list[0].ID != "j-1" || !strings.Contains(string(list[0].Retained), `"version":2`) {
		t.Fatalf("list: %s %v", rr.Body, err)
	}
	rr = do(t, h, "GET", "/v1/searches/t1/j-1", nil)
	var one api.Search
	if err := json.Unmarshal(rr.Body.Bytes(), &one); err != nil || len(one.Versions) != 2 || one.Versions[1] != 2 || len(one.Comparisons) != 1 || len(one.Champions) != 1 {
		t.Fatalf("show: %s %v", rr.Body, err)
	}
	if rr := do(t, h, "GET", "/v1/searches/t1/j-1/files/versions/multi_agent_design_v2.txt", nil); rr.Code != 200 || rr.Body.String() != "v2" {
		t.Errorf("version file: %d %s", rr.Code, rr.Body)
	}
	for p, code := range map[string]int{
		"/v1/searches/t1/j-1/files/versions/multi_agent_design_v9.txt": 404,
		"/v1/searches/t1/j-1/files/versions/..%2F..%2Fx":               400,
		"/v1/searches/t1/j-9":    404,
		"/v1/searches/t1/%2E%2E": 400,
	} {
		if rr := do(t, h, "GET", p, nil); rr.Code != code || strings.Contains(rr.Body.String(), "root:") {
			t.Errorf("%s: %d %s, want %d", p, rr.Code, rr.Body, code)
		}
	}
	gd := filepath.Join(dir, "generations", "1", "train")
	os.MkdirAll(gd, 0o750)
	os.WriteFile(filepath.Join(gd, "metrics.jsonl"), []byte(`{"step":1}`+"\n"), 0o640)
	if rr := do(t, h, "GET", "/v1/generations/1/files/train/metrics.jsonl", nil); rr.Code != 200 || !strings.Contains(rr.Body.String(), `"step":1`) {
		t.Errorf("generation file: %d %s", rr.Code, rr.Body)
	}
	if rr := do(t, h, "GET", "/v1/generations/x/files/train/metrics.jsonl", nil); rr.Code != 400 {
		t.Errorf("generation x: %d", rr.Code)
	}
}
