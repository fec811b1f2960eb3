package generation

import (
	"os"
	"path/filepath"
	"testing"
)

// TestTailerLines: the train stage's reader of metrics.jsonl returns only
// complete new lines, holds a half-written one back, and starts over when a
// resumed run rewrote the file shorter.
func TestTailerLines(t *testing.T) {
	p := filepath.Join(t.TempDir(), MetricsFile)
	tl := &tailer{path: p}
	if ls, err := tl.lines(); err != nil || len(ls) != 0 {
		t.Fatalf("missing file: %q %v", ls, err)
	}
	write := func(s string, flag int) {
		f, err := os.OpenFile(p, flag|os.O_WRONLY|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(s)
		f.Close()
	}
	read := func() []string {
		ls, err := tl.lines()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, l := range ls {
			out = append(out, string(l))
		}
		return out
	}
	write(`{"step":1}`+"\n"+`{"step":2}`+"\n"+`{"st`, os.O_TRUNC)
	if got := read(); len(got) != 2 || got[1] != `{"step":2}` {
		t.Fatalf("first read %q", got)
	}
	write(`ep":3}`+"\n", os.O_APPEND)
	if got := read(); len(got) != 1 || got[0] != `{"step":3}` {
		t.Fatalf("completed line %q", got)
	}
	write(`{"step":1}`+"\n", os.O_TRUNC)
	if got := read(); len(got) != 1 || got[0] != `{"step":1}` {
		t.Fatalf("after a rewrite %q", got)
	}
	// A resumed run replaces the file (rename) with one as long as before.
	tmp := p + ".new"
	if err := os.WriteFile(tmp, []byte(`{"step":7}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
	if got := read(); len(got) != 1 || got[0] != `{"step":7}` {
		t.Fatalf("after a replacement %q", got)
	}
}
