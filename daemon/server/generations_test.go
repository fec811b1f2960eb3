package server

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mass-dev/mass/daemon/store"
	"github.com/mass-dev/mass/generationfmt"
)

func TestGenerationsAndModels(t *testing.T) {
	s, dir := newTestServer(t)
	h := s.Handler()
	if rr := do(t, h, "GET", "/v1/generations", nil); rr.Code != http.StatusOK || strings.TrimSpace(rr.Body.String()) != "[]" {
		t.Fatalf("empty list: %d %s", rr.Code, rr.Body)
	}
	for g, body := range map[string]string{"1": `{"generation":1,"status":"done"}`, "2": `{"generation":2,"status":"running"}`} {
		d := filepath.Join(dir, "generations", g)
		if err := os.MkdirAll(d, 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, generationfmt.SummaryFile), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "generations", "3"), 0o750); err != nil { // no summary yet
		t.Fatal(err)
	}
	rr := do(t, h, "GET", "/v1/generations", nil)
	var list []struct{ Generation int }
	if err := json.Unmarshal(rr.Body.Bytes(), &list); err != nil || len(list) != 2 || list[0].Generation != 1 || list[1].Generation != 2 {
		t.Fatalf("list %s (%v)", rr.Body, err)
	}
	if rr := do(t, h, "GET", "/v1/generations/2", nil); rr.Code != http.StatusOK || !strings.Contains(rr.Body.String(), `"running"`) {
		t.Errorf("show 2: %d %s", rr.Code, rr.Body)
	}
	for path, code := range map[string]int{"/v1/generations/9": 404, "/v1/generations/-1": 400, "/v1/generations/01": 400} {
		if rr := do(t, h, "GET", path, nil); rr.Code != code {
			t.Errorf("%s: %d, want %d", path, rr.Code, code)
		}
	}
	if err := s.o.Store.PutModel(context.Background(), store.Model{Name: "gen-1", G: 1, Parent: "base", JobID: "j"}); err != nil {
		t.Fatal(err)
	}
	if rr := do(t, h, "GET", "/v1/models", nil); !strings.Contains(rr.Body.String(), `"name":"gen-1"`) {
		t.Errorf("models: %s", rr.Body)
	}
}
