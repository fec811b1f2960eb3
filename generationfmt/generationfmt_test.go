package generationfmt

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadSummaryAndOwner(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadSummary(dir); err == nil || !strings.Contains(err.Error(), "not a generation directory") {
		t.Errorf("empty dir: %v, want not a generation directory", err)
	}
	if _, ok, err := ReadOwner(dir); ok || err != nil {
		t.Errorf("no owner.json: ok %v, %v", ok, err)
	}
	files := map[string]string{
		SummaryFile: `{"generation":2,"status":"done","excluded":[{"id":"t","reason":"r"}],"training":{"best_step":50}}`,
		OwnerFile:   `{"job":"j-1"}`,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s, err := ReadSummary(dir)
	if err != nil || s.Generation != 2 || s.Status != StatusDone || len(s.Excluded) != 1 || s.Training == nil || s.Training.BestStep != 50 {
		t.Errorf("ReadSummary = %+v, %v", s, err)
	}
	if job, ok, err := ReadOwner(dir); job != "j-1" || !ok || err != nil {
		t.Errorf("ReadOwner = %q, %v, %v", job, ok, err)
	}
	if err := os.WriteFile(filepath.Join(dir, OwnerFile), []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadOwner(dir); err == nil {
		t.Error("owner.json without a job read as fine")
	}
}

func TestRemoveDir(t *testing.T) {
	root := t.TempDir()
	g := filepath.Join(root, "1")
	if err := os.MkdirAll(filepath.Join(g, "train"), 0o750); err != nil {
		t.Fatal(err)
	}
	left := filepath.Join(root, TrashPrefix+"2-1")
	if err := os.MkdirAll(left, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := RemoveDir(g); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(root)
	if len(ents) != 0 {
		t.Errorf("left behind: %v", ents)
	}
}
