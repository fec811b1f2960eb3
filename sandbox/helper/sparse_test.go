package helper

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHugeSparseFile checks that stat, read and manifest of a 1 TiB sparse
// file return promptly with a bounded result instead of reading it all.
func TestHugeSparseFile(t *testing.T) {
	s, root := newTestServer(t)
	p := filepath.Join(root, "huge.bin")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 40); err != nil {
		t.Skipf("filesystem refuses a 1 TiB sparse file: %v", err)
	}
	f.Close()

	st := s.Do(Request{Op: OpStat, Path: "huge.bin"})
	if !st.OK || st.Info == nil {
		t.Fatalf("stat: %+v", st)
	}
	if got, want := st.Info.SHA256, UnhashedPrefix+"1099511627776"; got != want {
		t.Errorf("stat sha256 = %q, want %q", got, want)
	}

	rd := s.Do(Request{Op: OpRead, Path: "huge.bin"})
	// Zeros read as binary: an invalid-kind error is the right answer too.
	if rd.OK && (rd.Read == nil || !rd.Read.Truncated || !strings.HasPrefix(rd.Read.SHA256, UnhashedPrefix)) {
		t.Errorf("read of a huge file = %+v, want truncated and unhashed", rd.Read)
	}
	if !rd.OK && rd.Kind != KindInvalid {
		t.Errorf("read of a huge file: %+v", rd)
	}

	man := s.Do(Request{Op: OpManifest})
	if !man.OK {
		t.Fatalf("manifest: %+v", man)
	}
	found := false
	for _, e := range man.Entries {
		if e.Path == "huge.bin" {
			found = true
			if !strings.HasPrefix(e.SHA256, UnhashedPrefix) {
				t.Errorf("manifest sha256 of huge.bin = %q", e.SHA256)
			}
		}
	}
	if !found {
		t.Error("manifest lacks huge.bin")
	}
}
