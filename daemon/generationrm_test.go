package daemon_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/mass-dev/mass/agents/model/scripted"
	"github.com/mass-dev/mass/cycle/generation"
	"github.com/mass-dev/mass/daemon/config"
	"github.com/mass-dev/mass/daemon/server"
	"github.com/mass-dev/mass/datadir"
)

// A generation removed with DELETE /v1/generations/{g} (massctl
// generation rm) is no longer callable while massd runs: its model leaves
// the registry at once, a call naming it is refused as unknown and the
// API answers 404 for it; the other generations stay callable.
func TestRemovedGenerationIsNotServed(t *testing.T) {
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	b, st := openBuiltins(t, cfg)
	defer st.Close()
	defer b.Close()
	ctx := context.Background()
	for i, name := range []string{"gen-1", "gen-2"} {
		m := generation.Model{Name: name, G: i + 1, Parent: scripted.Name}
		if err := b.RegisterModel(ctx, "job-"+name, m); err != nil {
			t.Fatal(err)
		}
	}
	gdir := filepath.Join(cfg.DataDir, "generations", "1")
	if err := os.MkdirAll(gdir, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(gdir, "owner.json"), []byte(`{"job":"job-gen-1"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	h := server.New(server.Options{Store: st, Layout: datadir.New(cfg.DataDir), Models: b.ModelList, TestModel: b.TestModel,
		UnregisterModels: b.UnregisterModels, Logger: quiet}).Handler()
	call := func(method, path string) int {
		rr := httptest.NewRecorder()
		h.ServeHTTP(rr, httptest.NewRequest(method, path, nil))
		return rr.Code
	}
	if code := call("POST", "/v1/models/gen-1/test"); code != http.StatusOK {
		t.Fatalf("gen-1 before removal: %d", code)
	}
	if code := call("DELETE", "/v1/generations/1"); code != http.StatusOK {
		t.Fatalf("remove generation 1: %d", code)
	}
	if _, err := b.Models.Client("gen-1"); err == nil {
		t.Error("gen-1 is still callable after its generation was removed")
	}
	if code := call("POST", "/v1/models/gen-1/test"); code != http.StatusNotFound {
		t.Errorf("POST /v1/models/gen-1/test after removal: %d, want 404", code)
	}
	for _, m := range b.ModelList() {
		if m.Name == "gen-1" {
			t.Errorf("gen-1 still listed: %+v", m)
		}
	}
	if got := chat(t, b, "gen-2"); got == "" {
		t.Error("gen-2 stopped answering")
	}
}
