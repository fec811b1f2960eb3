package server

import (
	"archive/tar"
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mass-dev/mass/daemon/jobs"
	"github.com/mass-dev/mass/daemon/store"
	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/jobkind"
)

// Defect 4: massd reports a low disk in healthz and metrics and refuses
// new work below the threshold (here set above any real free space).
func TestLowDiskRefusesNewWork(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(context.Background(), filepath.Join(dir, "massd.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	log := slog.New(slog.DiscardHandler)
	m, err := jobs.NewManager(jobs.Options{Store: st, Kinds: []jobkind.Kind{jobs.WaitKind()}, Layout: datadir.New(dir), Logger: log, MinFreeBytes: 1 << 62})
	if err != nil {
		t.Fatal(err)
	}
	h := New(Options{Store: st, Jobs: m, Layout: datadir.New(dir), Version: "test", Logger: log}).Handler()

	if rec := do(t, h, "GET", "/v1/healthz", nil); !strings.Contains(rec.Body.String(), `"status":"low_disk"`) || !strings.Contains(rec.Body.String(), `"low":true`) {
		t.Errorf("healthz = %s, want low_disk", rec.Body)
	}
	if rec := do(t, h, "GET", "/metrics", nil); !strings.Contains(rec.Body.String(), "mass_data_dir_low_disk 1") || !strings.Contains(rec.Body.String(), "mass_data_dir_free_bytes ") {
		t.Errorf("metrics lack the disk gauges:\n%s", rec.Body)
	}
	rec := do(t, h, "POST", "/v1/jobs", bytes.NewBufferString(`{"kind":"wait","params":{"seconds":1}}`))
	if rec.Code != 503 || !strings.Contains(rec.Body.String(), "threshold") {
		t.Errorf("submit = %d %s, want 503 naming the threshold", rec.Code, rec.Body)
	}
	body := tarOf(t, entry{name: "spec.yaml", typ: tar.TypeReg, body: specDoc}, entry{name: "data/a.csv", typ: tar.TypeReg, body: "a\n"})
	if rec := do(t, h, "POST", "/v1/tasks", body); rec.Code != 503 {
		t.Errorf("task add = %d %s, want 503", rec.Code, rec.Body)
	}
}
