package ledger

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestReopen(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "ledger.jsonl")
	if _, err := Reopen(missing, testEpisode); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Reopen of a missing ledger: err = %v, want fs.ErrNotExist", err)
	}
	if _, err := os.Lstat(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Reopen created %s (stat err %v)", missing, err)
	}

	p := writeLedger(t, 3)
	w, err := Reopen(p, testEpisode)
	if err != nil {
		t.Fatal(err)
	}
	if seq, _ := w.Head(); seq != 3 {
		t.Errorf("head seq after Reopen = %d, want 3", seq)
	}
	r, err := w.Append(sampleRecord(4))
	if err != nil {
		t.Fatal(err)
	}
	if r.Seq != 4 {
		t.Errorf("appended seq = %d, want 4", r.Seq)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if n, err := Verify(f, testEpisode); err != nil || n != 4 {
		t.Errorf("Verify after Reopen and Append = %d, %v; want 4 records", n, err)
	}
}
