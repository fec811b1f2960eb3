package sandboxtest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mass-dev/mass/sandbox"
)

func testFiles(t *testing.T, h Harness) {
	t.Parallel()
	ep := h.NewWorkspace(t, sandbox.WorkspaceSpec{}, nil)
	sb := h.NewSandbox(t, ep, "files")
	f := sb.Files()
	ctx := context.Background()
	filesReadEdit(t, ctx, sb)
	filesSearch(t, ctx, f)
	filesBig(t, ctx, f)
}

// filesReadEdit writes a file, reads slices of it and edits it.
func filesReadEdit(t *testing.T, ctx context.Context, sb sandbox.Sandbox) {
	f := sb.Files()
	var lines strings.Builder
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&lines, "line %d\n", i)
	}
	body := lines.String()
	ch, err := f.Write(ctx, "src/app.py", []byte(body))
	if err != nil {
		t.Fatalf("write: %v", err)
	}
	if got, want := ch, (sandbox.FileChange{Path: "/workspace/src/app.py", Created: true, Bytes: int64(len(body)), SHA256After: hexsum([]byte(body))}); got != want {
		t.Errorf("write = %+v, want %+v", got, want)
	}
	reads := []struct {
		offset, limit int
		want          string
		trunc         bool
	}{
		{0, 0, body, false},
		{2, 3, "line 3\nline 4\nline 5\n", true},
		{9, 5, "line 10\n", false},
		{20, 1, "", false},
	}
	for _, r := range reads {
		got, err := f.Read(ctx, "/workspace/src/app.py", r.offset, r.limit)
		if err != nil {
			t.Fatalf("read %d,%d: %v", r.offset, r.limit, err)
		}
		if got.Content != r.want || got.TotalLines != 10 || got.Truncated != r.trunc || got.SHA256 != hexsum([]byte(body)) {
			t.Errorf("read %d,%d = %+v, want content %q, 10 lines, truncated %v", r.offset, r.limit, got, r.want, r.trunc)
		}
	}
	ch, err = f.Edit(ctx, "src/app.py", "line 7\n", "seven\n", false)
	if err != nil {
		t.Fatalf("edit: %v", err)
	}
	edited := strings.Replace(body, "line 7\n", "seven\n", 1)
	if ch.SHA256Before != hexsum([]byte(body)) || ch.SHA256After != hexsum([]byte(edited)) || ch.Replacements != 1 || ch.Created {
		t.Errorf("edit = %+v", ch)
	}
	if got := string(Sh(t, sb, "cat src/app.py").Stdout); got != edited {
		t.Errorf("after edit the file is %q, want %q", got, edited)
	}
	if _, err := f.Edit(ctx, "src/app.py", "line", "L", false); !errors.Is(err, sandbox.ErrInvalid) {
		t.Errorf("ambiguous edit: %v, want ErrInvalid", err)
	}
	if _, err := f.Edit(ctx, "src/app.py", "absent", "x", false); !errors.Is(err, sandbox.ErrNotFound) {
		t.Errorf("edit of absent text: %v, want ErrNotFound", err)
	}
	if ch, err := f.Edit(ctx, "src/app.py", "line", "L", true); err != nil || ch.Replacements != 9 {
		t.Errorf("replace all = %+v, %v; want 9 replacements", ch, err)
	}
	if _, err := f.Read(ctx, "nope.txt", 0, 0); !errors.Is(err, sandbox.ErrNotFound) {
		t.Errorf("read of a missing file: %v, want ErrNotFound", err)
	}
}

// filesSearch lists, globs, greps, stats and takes the manifest; it runs
// after filesReadEdit made src/app.py.
func filesSearch(t *testing.T, ctx context.Context, f sandbox.Files) {
	if _, err := f.Write(ctx, "src/util.py", []byte("import os\nTODO = 1\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(ctx, "README.md", []byte("TODO: docs\n")); err != nil {
		t.Fatal(err)
	}
	ents, err := f.List(ctx, "src")
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if got, want := names(ents), "/workspace/src/app.py,/workspace/src/util.py"; got != want {
		t.Errorf("list = %s, want %s", got, want)
	}
	paths, err := f.Glob(ctx, "**/*.py", "")
	if err != nil {
		t.Fatalf("glob: %v", err)
	}
	if got, want := strings.Join(paths, ","), "/workspace/src/app.py,/workspace/src/util.py"; got != want {
		t.Errorf("glob = %s, want %s", got, want)
	}
	ms, err := f.Grep(ctx, "TODO", "", "*.py")
	if err != nil {
		t.Fatalf("grep: %v", err)
	}
	if len(ms) != 1 || ms[0] != (sandbox.GrepMatch{Path: "/workspace/src/util.py", Line: 2, Text: "TODO = 1"}) {
		t.Errorf("grep = %+v", ms)
	}
	if _, err := f.Grep(ctx, "(", "", ""); !errors.Is(err, sandbox.ErrInvalid) {
		t.Errorf("grep with a bad regexp: %v, want ErrInvalid", err)
	}
	st, err := f.Stat(ctx, "README.md")
	if err != nil {
		t.Fatalf("stat: %v", err)
	}
	if got, want := st, (sandbox.FileInfo{Path: "/workspace/README.md", Type: "file", Size: 11, Mode: 0o644, SHA256: hexsum([]byte("TODO: docs\n"))}); got != want {
		t.Errorf("stat = %+v, want %+v", got, want)
	}
	m, err := f.Manifest(ctx)
	if err != nil {
		t.Fatalf("manifest: %v", err)
	}
	if got, want := names(m), "README.md,src/app.py,src/util.py"; got != want {
		t.Errorf("manifest = %s, want %s", got, want)
	}
}

// filesBig round-trips a 1 MiB file.
func filesBig(t *testing.T, ctx context.Context, f sandbox.Files) {
	big := []byte(strings.Repeat("0123456789abcde\n", 1<<16)) // 1 MiB
	if _, err := f.Write(ctx, "big.txt", big); err != nil {
		t.Fatalf("write 1 MiB: %v", err)
	}
	if got, err := f.Read(ctx, "big.txt", 0, 1<<20); err != nil || len(got.Content) != len(big) || got.SHA256 != hexsum(big) {
		t.Errorf("read 1 MiB: %d bytes, err %v", len(got.Content), err)
	}
}

func names(fs []sandbox.FileInfo) string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Path)
	}
	return strings.Join(out, ",")
}
