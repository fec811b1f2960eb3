package helper

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mass-dev/mass/sandbox"
)

func hexsum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func newTestServer(t *testing.T) (*Server, string) {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"a.txt":          "one\ntwo\nthree\n",
		"src/main.py":    "import os\n# TODO fix\nprint(1)\n",
		"src/lib/x.py":   "TODO = 2\n",
		"docs/readme.md": "TODO docs\n",
		"bin.dat":        "\x00\x01\x02TODO",
		"noeol.txt":      "last line",
	}
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	return NewServer(root), root
}

// TestFIFO checks that no operation blocks on a FIFO an agent planted.
func TestFIFO(t *testing.T) {
	s, root := newTestServer(t)
	if err := syscall.Mkfifo(filepath.Join(root, "src", "trap.py"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, req := range []Request{
		{Op: OpRead, Path: "src/trap.py"},
		{Op: OpEdit, Path: "src/trap.py", Old: "a", New: "b"},
		{Op: OpStat, Path: "src/trap.py"},
		{Op: OpGrep, Pattern: "x", Path: "src/trap.py"},
		{Op: OpGrep, Pattern: "TODO"},
		{Op: OpManifest},
		{Op: OpWrite, Path: "src/trap.py", Content: []byte("x")},
	} {
		done := make(chan Response, 1)
		go func() { done <- s.Do(req) }()
		select {
		case resp := <-done:
			if req.Op == OpRead || req.Op == OpEdit {
				if resp.OK || resp.Kind != KindInvalid {
					t.Errorf("%s on a FIFO: %+v, want invalid", req.Op, resp)
				}
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s blocked on a FIFO", req.Op)
		}
	}
}

func TestRead(t *testing.T) {
	s, root := newTestServer(t)
	long := strings.Repeat("x", MaxLineChars+10) + "\nshort\n"
	if err := os.WriteFile(filepath.Join(root, "long.txt"), []byte(long), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path          string
		offset, limit int
		want          string
		lines         int
		trunc         bool
		kind          string
	}{
		{path: "a.txt", want: "one\ntwo\nthree\n", lines: 3},
		{path: "a.txt", offset: 1, limit: 1, want: "two\n", lines: 3, trunc: true},
		{path: "a.txt", offset: 5, want: "", lines: 3},
		{path: "noeol.txt", want: "last line", lines: 1},
		{path: "long.txt", want: strings.Repeat("x", MaxLineChars) + "…[line truncated]\nshort\n", lines: 2, trunc: true},
		{path: "missing.txt", kind: KindNotFound},
		{path: "src", kind: KindInvalid},
		{path: "bin.dat", kind: KindInvalid},
		{path: "a.txt", offset: -1, kind: KindInvalid},
		{path: "", kind: KindInvalid},
	}
	for _, tt := range tests {
		resp := s.Do(Request{Op: OpRead, Path: tt.path, Offset: tt.offset, Limit: tt.limit})
		if tt.kind != "" {
			if got, want := resp.Kind, tt.kind; got != want || resp.OK {
				t.Errorf("read %q: kind %q (%s), want %q", tt.path, got, resp.Error, want)
			}
			continue
		}
		if !resp.OK {
			t.Fatalf("read %q: %s", tt.path, resp.Error)
		}
		if got, want := resp.Read.Content, tt.want; got != want {
			t.Errorf("read %q %d,%d = %q, want %q", tt.path, tt.offset, tt.limit, got, want)
		}
		if got, want := resp.Read.TotalLines, tt.lines; got != want {
			t.Errorf("read %q: %d lines, want %d", tt.path, got, want)
		}
		if got, want := resp.Read.Truncated, tt.trunc; got != want {
			t.Errorf("read %q: truncated %v, want %v", tt.path, got, want)
		}
	}
}

func TestWriteEdit(t *testing.T) {
	s, root := newTestServer(t)
	resp := s.Do(Request{Op: OpWrite, Path: "new/dir/f.txt", Content: []byte("a b a\n")})
	if !resp.OK || !resp.Change.Created || resp.Change.SHA256After != hexsum("a b a\n") {
		t.Fatalf("write = %+v", resp)
	}
	tests := []struct {
		old, new   string
		all        bool
		want       string
		n          int
		kind       string
		path       string
		wantCreate bool
	}{
		{old: "a", new: "c", kind: KindInvalid},
		{old: "zzz", new: "c", kind: KindNotFound},
		{old: "b", new: "b", kind: KindInvalid},
		{old: "a", new: "c", all: true, want: "c b c\n", n: 2},
		{old: "b", new: "B", want: "c B c\n", n: 1},
		{old: "", new: "x", kind: KindInvalid},
		{old: "", new: "fresh", path: "created.txt", want: "fresh", wantCreate: true},
	}
	for _, tt := range tests {
		path := "new/dir/f.txt"
		if tt.path != "" {
			path = tt.path
		}
		resp := s.Do(Request{Op: OpEdit, Path: path, Old: tt.old, New: tt.new, ReplaceAll: tt.all})
		if tt.kind != "" {
			if resp.OK || resp.Kind != tt.kind {
				t.Errorf("edit %q->%q: %+v, want kind %s", tt.old, tt.new, resp, tt.kind)
			}
			continue
		}
		if !resp.OK {
			t.Fatalf("edit %q->%q: %s", tt.old, tt.new, resp.Error)
		}
		b, _ := os.ReadFile(filepath.Join(root, path))
		if got, want := string(b), tt.want; got != want {
			t.Errorf("after edit %q->%q: %q, want %q", tt.old, tt.new, got, want)
		}
		if got, want := resp.Change.Replacements, tt.n; !tt.wantCreate && got != want {
			t.Errorf("edit %q->%q: %d replacements, want %d", tt.old, tt.new, got, want)
		}
		if got, want := resp.Change.Created, tt.wantCreate; got != want {
			t.Errorf("edit created = %v, want %v", got, want)
		}
	}
	if resp := s.Do(Request{Op: OpWrite, Path: "big", Content: make([]byte, MaxWriteBytes+1)}); resp.Kind != KindTooLarge {
		t.Errorf("oversized write: %+v", resp.Kind)
	}
}

func TestListGlobGrepStat(t *testing.T) {
	s, root := newTestServer(t)
	list := s.Do(Request{Op: OpList})
	var names []string
	for _, e := range list.Entries {
		names = append(names, filepath.Base(e.Path)+":"+e.Type)
	}
	if got, want := strings.Join(names, ","), "a.txt:file,bin.dat:file,docs:dir,link:symlink,noeol.txt:file,src:dir"; got != want {
		t.Errorf("list = %s, want %s", got, want)
	}
	globs := []struct{ pattern, want string }{
		{"**/*.py", "src/lib/x.py,src/main.py"},
		{"*.txt", "a.txt,noeol.txt"},
		{"src/*.py", "src/main.py"},
		{"**", "a.txt,bin.dat,docs/readme.md,link,noeol.txt,src/lib/x.py,src/main.py"},
		{"docs/**/*.md", "docs/readme.md"},
	}
	for _, g := range globs {
		resp := s.Do(Request{Op: OpGlob, Pattern: g.pattern})
		var rel []string
		for _, p := range resp.Paths {
			r, _ := filepath.Rel(root, p)
			rel = append(rel, r)
		}
		if got := strings.Join(rel, ","); got != g.want {
			t.Errorf("glob %q = %s, want %s (%s)", g.pattern, got, g.want, resp.Error)
		}
	}
	greps := []struct{ pattern, glob, want string }{
		{"TODO", "", "docs/readme.md:1,src/lib/x.py:1,src/main.py:2"},
		{"TODO", "*.py", "src/lib/x.py:1,src/main.py:2"},
		{"^print", "", "src/main.py:3"},
	}
	for _, g := range greps {
		resp := s.Do(Request{Op: OpGrep, Pattern: g.pattern, Glob: g.glob})
		var got []string
		for _, m := range resp.Matches {
			r, _ := filepath.Rel(root, m.Path)
			got = append(got, r+":"+strconv.Itoa(m.Line))
		}
		if strings.Join(got, ",") != g.want {
			t.Errorf("grep %q %q = %v, want %s (%s)", g.pattern, g.glob, got, g.want, resp.Error)
		}
	}
	st := s.Do(Request{Op: OpStat, Path: "a.txt"})
	if !st.OK || st.Info.SHA256 != hexsum("one\ntwo\nthree\n") || st.Info.Size != 14 || st.Info.Type != "file" {
		t.Errorf("stat = %+v", st.Info)
	}
	if st := s.Do(Request{Op: OpStat, Path: "link"}); !st.OK || st.Info.Type != "symlink" || st.Info.SHA256 != "" {
		t.Errorf("stat of a symlink = %+v (%s)", st.Info, st.Error)
	}
	m := s.Do(Request{Op: OpManifest})
	if got, want := len(m.Entries), 6; got != want {
		t.Errorf("manifest has %d entries, want %d regular files", got, want)
	}
	for _, bad := range []Request{{Op: OpGrep, Pattern: "("}, {Op: OpGlob, Pattern: "["}, {Op: "nope"}, {Op: OpGlob}} {
		if resp := s.Do(bad); resp.OK || resp.Kind != KindInvalid {
			t.Errorf("%+v: %+v, want invalid", bad, resp)
		}
	}
}

func TestMatchGlob(t *testing.T) {
	tests := []struct {
		pattern, path string
		want          bool
	}{
		{"**/*.py", "a.py", true},
		{"**/*.py", "a/b/c.py", true},
		{"*.py", "a/b.py", false},
		{"a/**", "a/b/c", true},
		{"a/**/c", "a/c", true},
		{"a/**/c", "a/x/y/c", true},
		{"a/**/c", "a/x/y/d", false},
		{"**/**/**", "x", true},
	}
	for _, tt := range tests {
		if got := MatchGlob(tt.pattern, tt.path); got != tt.want {
			t.Errorf("MatchGlob(%q, %q) = %v, want %v", tt.pattern, tt.path, got, tt.want)
		}
	}
}

func TestDecode(t *testing.T) {
	tests := []struct {
		in   string
		want error
	}{
		{`{"op":"read","path":"a"}`, nil},
		{`{"path":"a"}`, sandbox.ErrInvalid},
		{`{"op":`, sandbox.ErrInvalid},
		{`[]`, sandbox.ErrInvalid},
	}
	for _, tt := range tests {
		_, err := DecodeRequest(strings.NewReader(tt.in))
		if !errors.Is(err, tt.want) && !(tt.want == nil && err == nil) {
			t.Errorf("DecodeRequest(%q) = %v, want %v", tt.in, err, tt.want)
		}
	}
	huge := bytes.Repeat([]byte(" "), MaxResponseBytes+10)
	if _, err := DecodeResponse(bytes.NewReader(huge)); !errors.Is(err, sandbox.ErrTooLarge) {
		t.Errorf("oversized response: %v, want ErrTooLarge", err)
	}
	if _, err := DecodeResponse(strings.NewReader(`{"ok":false,"kind":"denied","error":"permission denied"}`)); !errors.Is(err, sandbox.ErrDenied) {
		t.Errorf("denied response: %v, want ErrDenied", err)
	}
}

func TestCleanRel(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"a/b", "a/b", true},
		{"./a//b/", "a/b", true},
		{"a/../b", "b", true},
		{"../a", "", false},
		{"/etc", "", false},
		{".", "", false},
		{"a/../..", "", false},
		{"", "", false},
		{"a\x00b", "", false},
	}
	for _, tt := range tests {
		got, err := CleanRel(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("CleanRel(%q) = %q, %v; want %q ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}
