package boxhost

import (
	"archive/tar"
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/workspace"
)

func engineTar(t testing.TB, hs ...*tar.Header) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, h := range hs {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write(bytes.Repeat([]byte("x"), int(h.Size))); err != nil {
				t.Fatal(err)
			}
		}
	}
	tw.Close()
	return buf.Bytes()
}

func TestRewriteExport(t *testing.T) {
	src := engineTar(t,
		&tar.Header{Name: "./", Typeflag: tar.TypeDir, Mode: 0o755},
		&tar.Header{Name: "./a/", Typeflag: tar.TypeDir, Mode: 0o755},
		&tar.Header{Name: "./a/f.txt", Typeflag: tar.TypeReg, Size: 3, Mode: 0o644},
		&tar.Header{Name: "./ln", Typeflag: tar.TypeSymlink, Linkname: "/etc/shadow"},
		&tar.Header{Name: "./hard", Typeflag: tar.TypeLink, Linkname: "a/f.txt"},
		&tar.Header{Name: "./dev", Typeflag: tar.TypeChar, Devmajor: 1, Devminor: 3},
		&tar.Header{Name: "../escape", Typeflag: tar.TypeReg, Size: 1},
	)
	var out bytes.Buffer
	m, err := RewriteExport(bytes.NewReader(src), &out, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range m {
		got = append(got, f.Path+":"+f.Type)
	}
	if want := "a:dir,a/f.txt:file,ln:symlink,dev:other,hard:other"; strings.Join(got, ",") != want {
		t.Errorf("manifest %s, want %s", strings.Join(got, ","), want)
	}
	// The rewritten tar holds only dirs, files and symlinks, and matches the manifest.
	if err := workspace.Verify(bytes.NewReader(out.Bytes()), m, workspace.DefaultLimits); err != nil {
		t.Errorf("verify export: %v", err)
	}
	back, err := workspace.Manifest(bytes.NewReader(out.Bytes()), workspace.DefaultLimits)
	if err != nil || len(back) != 3 {
		t.Errorf("re-read export: %+v, %v; want 3 entries", back, err)
	}
	if _, err := RewriteExport(bytes.NewReader(src), &bytes.Buffer{}, 2); !errors.Is(err, sandbox.ErrTooLarge) {
		t.Errorf("cap: %v, want ErrTooLarge", err)
	}
}

func FuzzRewriteExport(f *testing.F) {
	f.Add(engineTar(f, &tar.Header{Name: "./a", Typeflag: tar.TypeReg, Size: 2}))
	f.Add(engineTar(f, &tar.Header{Name: "../../x", Typeflag: tar.TypeSymlink, Linkname: "/"}))
	f.Add([]byte("not a tar"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var out bytes.Buffer
		m, err := RewriteExport(bytes.NewReader(b), &out, 1<<20)
		if err != nil {
			return
		}
		for _, e := range m {
			if strings.HasPrefix(e.Path, "/") || strings.HasPrefix(e.Path, "../") {
				t.Fatalf("escaping name %q", e.Path)
			}
		}
		if err := workspace.Verify(bytes.NewReader(out.Bytes()), m, workspace.DefaultLimits); err != nil {
			t.Fatalf("export does not match its manifest: %v", err)
		}
	})
}
