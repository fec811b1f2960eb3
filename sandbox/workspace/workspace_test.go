package workspace

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/helper"
)

type ent struct {
	name, body, link string
	typ              byte
}

func mkTar(t testing.TB, ents ...ent) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range ents {
		h := &tar.Header{Name: e.name, Typeflag: e.typ, Mode: 0o644, Linkname: e.link}
		if e.typ == tar.TypeReg {
			h.Size = int64(len(e.body))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if e.body != "" {
			if _, err := tw.Write([]byte(e.body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

var sample = []ent{
	{name: "src/", typ: tar.TypeDir},
	{name: "src/a.py", typ: tar.TypeReg, body: "print(1)\n"},
	{name: "passwd", typ: tar.TypeSymlink, link: "/etc/passwd"},
	{name: "etcdir", typ: tar.TypeSymlink, link: "/etc"},
	{name: "hard", typ: tar.TypeLink, link: "src/a.py"},
	{name: "fifo", typ: tar.TypeFifo},
	{name: "null", typ: tar.TypeChar},
}

func TestManifest(t *testing.T) {
	m, err := Manifest(bytes.NewReader(mkTar(t, sample...)), DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range m {
		got = append(got, f.Path+":"+f.Type)
	}
	if want := "src:dir,src/a.py:file,passwd:symlink,etcdir:symlink,hard:other,fifo:other,null:other"; strings.Join(got, ",") != want {
		t.Errorf("manifest = %s, want %s", strings.Join(got, ","), want)
	}
	sum := sha256.Sum256([]byte("print(1)\n"))
	if got, want := m[1].SHA256, hex.EncodeToString(sum[:]); got != want {
		t.Errorf("sha256 of src/a.py = %q, want %q", got, want)
	}
	if err := Verify(bytes.NewReader(mkTar(t, sample...)), m, DefaultLimits); err != nil {
		t.Errorf("verify against its own manifest: %v", err)
	}
	m[1].SHA256 = strings.Repeat("0", 64)
	if err := Verify(bytes.NewReader(mkTar(t, sample...)), m, DefaultLimits); !errors.Is(err, sandbox.ErrInvalid) {
		t.Errorf("verify with a wrong sha: %v", err)
	}
}

func TestReadFile(t *testing.T) {
	archive := mkTar(t, sample...)
	tests := []struct {
		name string
		max  int64
		want string
		err  error
	}{
		{"src/a.py", 0, "print(1)\n", nil},
		{"./src/a.py", 100, "print(1)\n", nil},
		{"src/a.py", 3, "", sandbox.ErrTooLarge},
		{"passwd", 0, "", sandbox.ErrDenied},
		{"etcdir", 0, "", sandbox.ErrDenied},
		{"hard", 0, "", sandbox.ErrDenied},
		{"fifo", 0, "", sandbox.ErrDenied},
		{"null", 0, "", sandbox.ErrDenied},
		{"src", 0, "", sandbox.ErrDenied},
		{"missing", 0, "", sandbox.ErrNotFound},
		{"../etc/passwd", 0, "", sandbox.ErrInvalid},
		{"/etc/passwd", 0, "", sandbox.ErrInvalid},
	}
	for _, tt := range tests {
		got, err := ReadFile(bytes.NewReader(archive), tt.name, tt.max)
		if tt.err != nil {
			if !errors.Is(err, tt.err) {
				t.Errorf("ReadFile(%q) = %v, want %v", tt.name, err, tt.err)
			}
			continue
		}
		if err != nil || string(got) != tt.want {
			t.Errorf("ReadFile(%q) = %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
}

func TestWalkRejects(t *testing.T) {
	tests := []struct {
		name string
		tar  []byte
		lim  Limits
		err  error
	}{
		{"escape", mkTar(t, ent{name: "../x", typ: tar.TypeReg, body: "x"}), DefaultLimits, sandbox.ErrInvalid},
		{"absolute", mkTar(t, ent{name: "/etc/x", typ: tar.TypeReg, body: "x"}), DefaultLimits, sandbox.ErrInvalid},
		{"file cap", mkTar(t, ent{name: "f", typ: tar.TypeReg, body: "12345"}), Limits{MaxFileBytes: 4}, sandbox.ErrTooLarge},
		{"total cap", mkTar(t, ent{name: "a", typ: tar.TypeReg, body: "123"}, ent{name: "b", typ: tar.TypeReg, body: "123"}), Limits{MaxTotal: 5}, sandbox.ErrTooLarge},
		{"entry cap", mkTar(t, ent{name: "a/", typ: tar.TypeDir}, ent{name: "b/", typ: tar.TypeDir}), Limits{MaxEntries: 1}, sandbox.ErrTooLarge},
		{"garbage", []byte(strings.Repeat("x", 1024)), DefaultLimits, sandbox.ErrInvalid},
		{"huge sparse header", hugeHeader(t), DefaultLimits, sandbox.ErrTooLarge},
	}
	for _, tt := range tests {
		_, err := Manifest(bytes.NewReader(tt.tar), tt.lim)
		if !errors.Is(err, tt.err) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.err)
		}
	}
}

// hugeHeader declares a 1 TiB file without its content.
func hugeHeader(t testing.TB) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: "sparse", Typeflag: tar.TypeReg, Size: 1 << 40, Mode: 0o644}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "workspace.tar")
	if err := os.WriteFile(good, mkTar(t, sample...), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(good, filepath.Join(dir, "link.tar")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.tar"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(good)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, bad := range []string{"link.tar", "fifo.tar", ".", "missing.tar"} {
		if f, err := Open(filepath.Join(dir, bad)); err == nil {
			f.Close()
			t.Errorf("Open(%s) succeeded", bad)
		}
	}
}

func TestDecodeManifest(t *testing.T) {
	tests := []struct {
		in  string
		err error
	}{
		{`[{"path":"a.py","type":"file","size":1,"mode":420,"sha256":"ab"}]`, nil},
		{`[{"path":"../a"}]`, sandbox.ErrInvalid},
		{`{"path":"a"}`, sandbox.ErrInvalid},
		{`[`, sandbox.ErrInvalid},
	}
	for _, tt := range tests {
		_, err := DecodeManifest(strings.NewReader(tt.in))
		if tt.err == nil && err != nil || tt.err != nil && !errors.Is(err, tt.err) {
			t.Errorf("DecodeManifest(%s) = %v, want %v", tt.in, err, tt.err)
		}
	}
}

func FuzzManifest(f *testing.F) {
	f.Add(mkTar(f, sample...))
	f.Add(hugeHeader(f))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Manifest(bytes.NewReader(b), Limits{MaxEntries: 1000, MaxFileBytes: 1 << 20, MaxTotal: 4 << 20})
		if err != nil {
			return
		}
		for _, e := range m {
			if strings.HasPrefix(e.Path, "/") || strings.HasPrefix(e.Path, "../") || e.Path == ".." {
				t.Fatalf("accepted escaping name %q", e.Path)
			}
			if e.Type == "file" && len(e.SHA256) != 64 {
				t.Fatalf("file %q without sha256", e.Path)
			}
		}
	})
}

func FuzzDecodeManifest(f *testing.F) {
	f.Add([]byte(`[{"path":"a.py","type":"file","size":1,"mode":420,"sha256":"ab"}]`))
	f.Add([]byte(`[{"path":"/etc"}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeManifest(bytes.NewReader(b))
		if err != nil {
			return
		}
		for _, e := range m {
			if _, err := helper.CleanRel(e.Path); err != nil {
				t.Fatalf("accepted entry %q: %v", e.Path, err)
			}
		}
	})
}
