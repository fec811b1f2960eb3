package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/workspace"
)

// TestHelperMountedUnreadable pins F1: the helper inside the box is a
// root-owned copy of mode 0711, which the agent can run but not read.
func TestHelperMountedUnreadable(t *testing.T) {
	_, sb := sessionBox(t)
	if got := sh(t, sb, "stat -c %a:%u:%g "+HelperMount+"; cat "+HelperMount+" >/dev/null 2>&1 && echo READ"); got != "711:0:0" {
		t.Errorf("helper in the box: %q, want 711:0:0 and unreadable", got)
	}
}

// TestExportStripsSetuid pins F3: an agent's chmod 6755 copy of a binary
// leaves the export without setuid/setgid, owned 0:0, and the manifest
// records the stripped bits.
func TestExportStripsSetuid(t *testing.T) {
	b, sb := sessionBox(t)
	sh(t, sb, "cp /bin/sh suid && chmod 6755 suid && mkdir sticky && chmod 1777 sticky")
	var buf bytes.Buffer
	m, err := b.r.ExportWorkspace(context.Background(), b.episode, &buf, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]int64{"suid": {0o755, 0o6000}, "sticky": {0o777, 0o1000}}
	for _, f := range m {
		if w, ok := want[f.Path]; ok && (int64(f.Mode) != w[0] || int64(f.Stripped) != w[1]) {
			t.Errorf("manifest %s: mode %o stripped %o, want %o %o", f.Path, f.Mode, f.Stripped, w[0], w[1])
		}
	}
	tr := tar.NewReader(&buf)
	seen := 0
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Mode&0o7000 != 0 || h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" {
			t.Errorf("export entry %s: mode %o owner %d:%d (%s:%s), want no special bits, 0:0 unnamed", h.Name, h.Mode, h.Uid, h.Gid, h.Uname, h.Gname)
		}
		if h.Name == "suid" || h.Name == "sticky/" {
			seen++
		}
	}
	if seen != 2 {
		t.Errorf("export holds %d of suid, sticky/", seen)
	}
}

// TestExportKeepsHardLinks pins F4: both names of a hard-linked file
// appear in the export and its manifest, each with the content.
func TestExportKeepsHardLinks(t *testing.T) {
	b, sb := sessionBox(t)
	sh(t, sb, "echo shared > one && ln one two")
	var buf bytes.Buffer
	m, err := b.r.ExportWorkspace(context.Background(), b.episode, &buf, 0)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, f := range m {
		if f.Type == "file" {
			files[f.Path] = f.SHA256
		}
	}
	if files["one"] == "" || files["one"] != files["two"] {
		t.Errorf("manifest files %v: want one and two with the same content", files)
	}
	tr := tar.NewReader(&buf)
	got := map[string]string{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(tr)
		t.Logf("tar %s %c %d", h.Name, h.Typeflag, len(body))
		if h.Typeflag == tar.TypeReg {
			got[h.Name] = string(body)
		}
	}
	if got["one"] != "shared\n" || got["two"] != "shared\n" {
		t.Errorf("export regular files %q, want one and two holding %q", got, "shared\n")
	}
}

// TestManifestFailsOnHiddenFiles pins F4: files under a directory the
// agent made unreadable, or past PATH_MAX, make the manifest fail loudly
// instead of vanishing from the audit.
func TestManifestFailsOnHiddenFiles(t *testing.T) {
	for name, script := range map[string]string{
		"mode-000":  "mkdir -p h/d && echo x > h/d/f && chmod 000 h",
		"long-path": `d=$(printf 'a%.0s' $(seq 200)); for i in $(seq 25); do mkdir $d && cd $d || exit 1; done; echo x > f`,
	} {
		t.Run(name, func(t *testing.T) {
			_, sb := sessionBox(t)
			sh(t, sb, script)
			m, err := sb.Files().Manifest(context.Background())
			if err == nil {
				t.Errorf("manifest of %d entries and no error; the hidden file is missing", len(m))
			}
		})
	}
}

// TestExportMarksLongPaths pins F4: the engine's archive silently drops
// entries past PATH_MAX, so the export's manifest marks the directory below
// which they were lost.
func TestExportMarksLongPaths(t *testing.T) { eachRuntime(t, testExportMarksLongPaths) }

func testExportMarksLongPaths(t *testing.T, pol sandbox.Policy) {
	b, sb := sessionBoxOn(t, pol)
	sh(t, sb, `d=$(printf 'a%.0s' $(seq 200)); for i in $(seq 25); do mkdir $d && cd $d || exit 1; done; echo x > f; `+
		`mkdir -p b/$(printf 'b%.0s' $(seq 3900))`)
	var buf bytes.Buffer
	m, err := b.r.ExportWorkspace(context.Background(), b.episode, &buf, 0)
	if err != nil {
		t.Fatal(err)
	}
	deepest, marked := 0, 0
	for _, f := range m {
		deepest = max(deepest, len(f.Path))
		if f.Omitted != "" {
			marked++
			t.Logf("%d-byte %s: %s", len(f.Path), f.Type, f.Omitted)
		}
	}
	if marked != 1 {
		t.Errorf("manifest of %d entries (deepest path %d bytes) marks %d; want the one directory whose child is missing", len(m), deepest, marked)
	}
}

// TestExportLeavesOutSparseFile pins F4: a 1 TiB sparse file (free on the
// workspace tmpfs) no longer fails the export; it is left out with a note
// and every entry after it, in its directory and above, is still exported.
func TestExportLeavesOutSparseFile(t *testing.T) { eachRuntime(t, testExportLeavesOutSparseFile) }

func testExportLeavesOutSparseFile(t *testing.T, pol sandbox.Policy) {
	b, sb := sessionBoxOn(t, pol)
	got := sh(t, sb, "mkdir -p a m/q && echo a > a/x && echo n > m/n && echo q > m/q/r && echo z > z && "+
		"dd if=/dev/zero of=m/big bs=1 count=0 seek=1099511627776 2>/dev/null && ln z m/zz && stat -c %s m/big")
	if got != "1099511627776" {
		t.Fatalf("sparse file: %q", got)
	}
	var buf bytes.Buffer
	m, err := b.r.ExportWorkspace(context.Background(), b.episode, &buf, 1<<20)
	if err != nil {
		t.Fatalf("export with a sparse file: %v", err)
	}
	for _, f := range m {
		if f.Path == "m/big" && (f.Omitted == "" || f.Size != 1<<40) {
			t.Errorf("manifest m/big: %+v, want size 1 TiB and a note", f)
		}
	}
	files := map[string]string{}
	exported := bytes.Clone(buf.Bytes())
	tr := tar.NewReader(&buf)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(tr)
		files[h.Name] = string(body)
	}
	want := map[string]string{"a/x": "a\n", "m/n": "n\n", "m/q/r": "q\n", "z": "z\n", "m/zz": "z\n"}
	for n, c := range want {
		if files[n] != c {
			t.Errorf("export %s = %q, want %q (export holds %d entries)", n, files[n], c, len(files))
		}
	}
	if _, ok := files["m/big"]; ok {
		t.Errorf("export holds m/big")
	}
	if err := workspace.Verify(bytes.NewReader(exported), m, workspace.DefaultLimits); err != nil {
		t.Errorf("verify export against its manifest: %v", err)
	}
}
