package judge

import (
	"archive/tar"
	"bytes"
	"fmt"
	"strings"
	"testing"
)

type ent struct {
	name, body, link string
	typ              byte
	size             int64
}

func mkTar(t testing.TB, ents ...ent) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range ents {
		h := &tar.Header{Name: e.name, Typeflag: e.typ, Mode: 0o644, Linkname: e.link}
		if e.typ == tar.TypeReg {
			h.Size = int64(len(e.body))
			if e.size > 0 {
				h.Size = e.size
			}
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if e.typ == tar.TypeReg {
			if e.size > 0 {
				for n := int64(0); n < e.size; n += 1 << 20 {
					chunk := min(1<<20, e.size-n)
					tw.Write(bytes.Repeat([]byte("x"), int(chunk)))
				}
			} else {
				tw.Write([]byte(e.body))
			}
		}
	}
	tw.Close()
	return buf.Bytes()
}

func TestBuildHostile(t *testing.T) {
	ents := []ent{
		{name: "report.md", typ: tar.TypeSymlink, link: "/etc/passwd"},
		{name: "summary.json", typ: tar.TypeReg, body: `{"total_revenue": 1}`},
		{name: "../../escape.py", typ: tar.TypeReg, body: "print(1)"},
		{name: "big.md", typ: tar.TypeReg, size: 8 << 20},
		{name: "hard.txt", typ: tar.TypeLink, link: "summary.json"},
		{name: "bin.py", typ: tar.TypeReg, body: "a\x00b"},
	}
	deep := "d"
	for i := 0; i < 20; i++ {
		deep += "/d"
	}
	ents = append(ents, ent{name: deep + "/deep.py", typ: tar.TypeReg, body: "x=1"})
	for i := 0; i < 500; i++ {
		ents = append(ents, ent{name: fmt.Sprintf("many/f%03d.py", i), typ: tar.TypeReg, body: "pass"})
	}
	b, err := Build(bytes.NewReader(mkTar(t, ents...)), []string{"report.md", "summary.json"})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Tree) != MaxTreeFiles || b.Omitted == 0 {
		t.Fatalf("tree %d omitted %d", len(b.Tree), b.Omitted)
	}
	if b.Preflight[0].OK() || !strings.Contains(b.Preflight[0].Note, "link") || !b.Preflight[1].OK() {
		t.Fatalf("preflight %+v", b.Preflight)
	}
	code := 0
	for _, e := range b.Excerpts {
		if strings.Contains(e.Path, "..") || strings.Contains(e.Text, "root:") || strings.Contains(e.Text, "\x00") {
			t.Fatalf("bad excerpt %+v", e)
		}
		if e.Kind == "report" && (len(e.Text) > ReportChars || !e.Truncated) {
			t.Fatalf("report cap: %d", len(e.Text))
		}
		if e.Kind == "code" {
			code++
			if strings.Contains(e.Path, "/d/d/d/d/d/d") {
				t.Fatalf("excerpt beyond the depth cap: %s", e.Path)
			}
		}
	}
	if code != MaxCodeFiles {
		t.Fatalf("%d code excerpts", code)
	}
	out := b.Render()
	if !strings.Contains(out, "- [ ] report.md: report.md is a link (not followed)") || !strings.Contains(out, "- [x] summary.json") {
		t.Fatal(out[:500])
	}
}

func TestBuildTruncatedTar(t *testing.T) {
	full := mkTar(t, ent{name: "a.md", typ: tar.TypeReg, body: strings.Repeat("y", 4000)})
	if _, err := Build(bytes.NewReader(full[:1000]), nil); err == nil {
		t.Fatal("a cut tar built without error")
	}
}

func FuzzBuild(f *testing.F) {
	f.Add(mkTar(f, ent{name: "r.md", typ: tar.TypeReg, body: "# r"}, ent{name: "l", typ: tar.TypeSymlink, link: "/"}))
	f.Add(mkTar(f, ent{name: "../x.json", typ: tar.TypeReg, body: "{}"}))
	f.Add([]byte("not a tar"))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := Build(bytes.NewReader(data), []string{"r.md", "*.json"})
		if err != nil {
			return
		}
		if len(b.Tree) > MaxTreeFiles {
			t.Fatal("tree cap")
		}
		code := 0
		for _, e := range b.Excerpts {
			if strings.HasPrefix(e.Path, "/") || strings.HasPrefix(e.Path, "../") {
				t.Fatalf("escaping path %q", e.Path)
			}
			if e.Kind == "code" {
				code++
			}
		}
		if code > MaxCodeFiles {
			t.Fatal("code cap")
		}
		_ = b.Render()
	})
}
