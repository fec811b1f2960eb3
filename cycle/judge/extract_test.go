package judge

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestExtractHostile(t *testing.T) {
	dest := t.TempDir()
	outside := t.TempDir()
	data := mkTar(t,
		ent{name: "ok/", typ: tar.TypeDir},
		ent{name: "ok/a.txt", typ: tar.TypeReg, body: "a"},
		ent{name: "ln", typ: tar.TypeSymlink, link: outside},
		ent{name: "ln/evil.txt", typ: tar.TypeReg, body: "x"},
		ent{name: "../../escape.txt", typ: tar.TypeReg, body: "e"},
		ent{name: "hard", typ: tar.TypeLink, link: "/etc/passwd"},
	)
	if err := Extract(bytes.NewReader(data), dest, 1<<20); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dest, "ok", "a.txt")); err != nil || string(b) != "a" {
		t.Fatalf("regular file: %q %v", b, err)
	}
	if st, err := os.Lstat(filepath.Join(dest, "ln")); err != nil || st.Mode()&os.ModeSymlink != 0 {
		t.Fatalf("ln: %v %v", st, err)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatal("wrote through a link")
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dest), "escape.txt")); err == nil {
		t.Fatal("escaped the root")
	}
	if _, err := os.Lstat(filepath.Join(dest, "hard")); err == nil {
		t.Fatal("extracted a hard link")
	}
	big := mkTar(t, ent{name: "big", typ: tar.TypeReg, size: 3 << 20})
	if err := Extract(bytes.NewReader(big), t.TempDir(), 1<<20); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Fatalf("size cap: %v", err)
	}
}

func FuzzExtract(f *testing.F) {
	f.Add(mkTar(f, ent{name: "a/b.txt", typ: tar.TypeReg, body: "x"}, ent{name: "a", typ: tar.TypeSymlink, link: "/"}))
	f.Add(mkTar(f, ent{name: "../../x", typ: tar.TypeReg, body: "x"}))
	f.Fuzz(func(t *testing.T, data []byte) {
		root := t.TempDir()
		dest := filepath.Join(root, "dest")
		if err := os.Mkdir(dest, 0o755); err != nil {
			t.Fatal(err)
		}
		_ = Extract(bytes.NewReader(data), dest, 1<<20)
		ents, _ := os.ReadDir(root)
		if len(ents) != 1 {
			t.Fatalf("wrote beside the destination: %v", ents)
		}
		filepath.Walk(dest, func(p string, info os.FileInfo, err error) error {
			if err == nil && info.Mode()&(os.ModeSymlink|os.ModeDevice|os.ModeNamedPipe) != 0 {
				t.Fatalf("extracted a special file %s", p)
			}
			return nil
		})
	})
}
