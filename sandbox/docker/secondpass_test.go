package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
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
