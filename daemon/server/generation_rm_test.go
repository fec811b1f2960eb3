package server

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/store"
)

// TestRemoveGeneration: DELETE /v1/generations/{g} removes the folder
// (and trash an earlier removal left), unregisters the model its job
// registered as that generation and keeps the others.
func TestRemoveGeneration(t *testing.T) {
	s, dir := newTestServer(t)
	var unregistered []string
	s.o.UnregisterModels = func(names []string) { unregistered = append(unregistered, names...) }
	h := s.Handler()
	ctx := context.Background()
	gdir := filepath.Join(dir, "generations", "1")
	if err := os.MkdirAll(filepath.Join(gdir, "train"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(gdir, "owner.json"), []byte(`{"job":"job-gone"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, "generations", ".removed-4-1")
	if err := os.MkdirAll(stale, 0o750); err != nil {
		t.Fatal(err)
	}
	for _, m := range []store.Model{{Name: "gen-1", G: 1, JobID: "job-gone"}, {Name: "gen-2", G: 2, JobID: "job-other"}} {
		if err := s.o.Store.PutModel(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	rr := do(t, h, "DELETE", "/v1/generations/1", nil)
	var out api.GenerationRemoval
	if err := json.Unmarshal(rr.Body.Bytes(), &out); rr.Code != http.StatusOK || err != nil {
		t.Fatalf("delete: %d %s", rr.Code, rr.Body)
	}
	if out.Generation != 1 || out.Job != "job-gone" || len(out.Models) != 1 || out.Models[0] != "gen-1" {
		t.Errorf("removal %+v", out)
	}
	if len(unregistered) != 1 || unregistered[0] != "gen-1" {
		t.Errorf("unregistered from the running registry: %v, want gen-1", unregistered)
	}
	ents, _ := os.ReadDir(filepath.Join(dir, "generations"))
	if len(ents) != 0 {
		t.Errorf("left in generations/: %v", ents)
	}
	if ms, _ := s.o.Store.Models(ctx); len(ms) != 1 || ms[0].Name != "gen-2" {
		t.Errorf("models left %+v, want gen-2", ms)
	}
	for path, code := range map[string]int{"/v1/generations/1": 404, "/v1/generations/0": 400, "/v1/generations/x": 400} {
		if rr := do(t, h, "DELETE", path, nil); rr.Code != code {
			t.Errorf("DELETE %s: %d, want %d: %s", path, rr.Code, code, rr.Body)
		}
	}
	if rr := do(t, h, "POST", "/v1/generations/1/retry", nil); rr.Code != 404 {
		t.Errorf("retry of a removed generation: %d %s", rr.Code, rr.Body)
	}
}
