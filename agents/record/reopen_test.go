package record

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestReopenMissingCreatesNothing(t *testing.T) {
	p := filepath.Join(t.TempDir(), "api_requests.jsonl")
	if _, err := Reopen(p, "ep-1"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Reopen of a missing recording: err = %v, want fs.ErrNotExist", err)
	}
	if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Reopen created %s (stat err %v)", p, err)
	}

	w, err := Open(p, "ep-1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Append(sample(1)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w, err = Reopen(p, "ep-1")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if got, want := w.Seq(), int64(1); got != want {
		t.Errorf("seq after Reopen = %d, want %d", got, want)
	}
}
