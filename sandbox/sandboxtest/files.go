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

func testProtected(t *testing.T, h Harness) {
	t.Parallel()
	dir := t.TempDir()
	mustWrite(t, dir+"/eval/score.py", "SCORE = 1\n")
	mustWrite(t, dir+"/eval/data/truth.csv", "y\n1\n")
	ep := h.NewWorkspace(t, sandbox.WorkspaceSpec{Protected: []string{"eval/score.py", "eval/data"}},
		[]sandbox.Input{{HostPath: dir + "/eval", Dest: "eval"}})
	sb := h.NewSandbox(t, ep, "attacker")
	ctx := context.Background()
	if _, err := sb.Files().Write(ctx, "eval/score.py", []byte("SCORE = 100\n")); !errors.Is(err, sandbox.ErrDenied) {
		t.Errorf("write to a protected file: %v, want ErrDenied", err)
	}
	if _, err := sb.Files().Edit(ctx, "eval/data/truth.csv", "1", "0", false); !errors.Is(err, sandbox.ErrDenied) {
		t.Errorf("edit inside a protected dir: %v, want ErrDenied", err)
	}
	attacks := []string{
		"echo x >> eval/score.py",
		"rm -f eval/score.py",
		"mv eval/score.py eval/old.py",
		"mv eval eval2",
		"rm -rf eval/data",
		"echo y > eval/data/new.csv",
		"chmod 666 eval/score.py",
		"mv eval/data eval/d2",
	}
	for _, a := range attacks {
		Sh(t, sb, a+" 2>/dev/null")
	}
	got := string(Sh(t, sb, "cat eval/score.py eval/data/truth.csv; ls eval; ls eval/data").Stdout)
	if want := "SCORE = 1\ny\n1\ndata\nscore.py\ntruth.csv\n"; got != want {
		t.Errorf("protected paths changed:\n%s\nwant:\n%s", got, want)
	}
	// Agents may still add their own files beside protected ones.
	if _, err := sb.Files().Write(ctx, "eval/notes.txt", []byte("mine")); err != nil {
		t.Errorf("write beside a protected file: %v", err)
	}
	if res := Sh(t, sb, "rm eval/notes.txt && echo removed"); string(res.Stdout) != "removed\n" {
		t.Errorf("agent cannot remove its own file beside protected ones: %s", res.Stderr)
	}
}

func testLifecycle(t *testing.T, h Harness) {
	t.Parallel()
	ctx := context.Background()
	ep := h.NewWorkspace(t, sandbox.WorkspaceSpec{}, nil)
	a := h.NewSandbox(t, ep, "orchestrator")
	h.NewSandbox(t, ep, "worker-1")
	infos, err := h.Runtime.List(ctx, ep)
	if err != nil {
		t.Fatal(err)
	}
	agents := map[string]bool{}
	volumes := 0
	for _, in := range infos {
		if in.Episode != ep {
			t.Errorf("List(%s) returned %+v", ep, in)
		}
		if in.Kind == "volume" {
			volumes++
		} else {
			agents[in.Agent] = true
		}
	}
	if !agents["orchestrator"] || !agents["worker-1"] || volumes != 1 {
		t.Errorf("List = %+v; want both agents and one volume", infos)
	}
	if _, err := a.Files().Write(ctx, "keep.txt", []byte("kept")); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := a.Exec(ctx, sandbox.ExecRequest{Argv: []string{"sleep", "600"}})
		done <- err
	}()
	Sh(t, a, "true") // the sleep is running by now or soon
	if err := h.Runtime.KillEpisode(ctx, ep); err != nil {
		t.Fatalf("KillEpisode: %v", err)
	}
	<-done // the running exec returns once its container is gone
	infos, err = h.Runtime.List(ctx, ep)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range infos {
		if in.Kind == "container" && !strings.HasPrefix(in.Agent, "_") {
			t.Errorf("after KillEpisode: %+v still there", in)
		}
	}
	var sb strings.Builder
	m, err := h.Runtime.ExportWorkspace(ctx, ep, &nopWriter{&sb}, 0)
	if err != nil || len(m) != 1 || m[0].Path != "keep.txt" {
		t.Errorf("export after KillEpisode = %+v, %v; want keep.txt", m, err)
	}
	other := h.NewWorkspace(t, sandbox.WorkspaceSpec{}, nil)
	n, err := h.Runtime.ReapOrphans(ctx, func(e string) bool { return e != ep })
	if err != nil || n == 0 {
		t.Errorf("ReapOrphans = %d, %v; want the dead episode's objects", n, err)
	}
	if infos, _ := h.Runtime.List(ctx, ep); len(infos) != 0 {
		t.Errorf("after ReapOrphans: %+v", infos)
	}
	if infos, _ := h.Runtime.List(ctx, other); len(infos) == 0 {
		t.Errorf("ReapOrphans removed the live episode %s", other)
	}
}

type nopWriter struct{ sb *strings.Builder }

func (w *nopWriter) Write(p []byte) (int, error) { return w.sb.Write(p) }

func testInvalid(t *testing.T, h Harness) {
	t.Parallel()
	ctx := context.Background()
	bad := []sandbox.Spec{
		{Episode: "../x", Agent: "a", Policy: h.policy()},
		{Episode: "ok", Agent: "a b", Policy: h.policy()},
		{Episode: "ok", Agent: "a"}, // zero policy
	}
	for _, s := range bad {
		if _, err := h.Runtime.Create(ctx, s); !errors.Is(err, sandbox.ErrInvalid) {
			t.Errorf("Create(%+v): %v, want ErrInvalid", s, err)
		}
	}
	if _, err := h.Runtime.Create(ctx, sandbox.Spec{Episode: "no-such-episode", Agent: "a", Policy: h.policy()}); !errors.Is(err, sandbox.ErrNotFound) {
		t.Errorf("Create without a workspace: %v, want ErrNotFound", err)
	}
	ws := []sandbox.WorkspaceSpec{
		{Episode: "x/y"},
		{Episode: Episode(t), Protected: []string{"../etc"}},
		{Episode: Episode(t), Protected: []string{"/etc"}},
	}
	for _, w := range ws {
		if err := h.Runtime.CreateWorkspace(ctx, w, nil); !errors.Is(err, sandbox.ErrInvalid) {
			t.Errorf("CreateWorkspace(%+v): %v, want ErrInvalid", w, err)
		}
	}
	live := h.NewWorkspace(t, sandbox.WorkspaceSpec{}, nil)
	if err := h.Runtime.CreateWorkspace(ctx, sandbox.WorkspaceSpec{Episode: live}, nil); !errors.Is(err, sandbox.ErrInvalid) {
		t.Errorf("CreateWorkspace twice: %v, want ErrInvalid", err)
	}
	if infos, err := h.Runtime.List(ctx, live); err != nil || len(infos) == 0 {
		t.Errorf("a second CreateWorkspace removed the first: %+v, %v", infos, err)
	}
	p := h.policy()
	p.Seccomp = "unconfined"
	if _, err := h.Runtime.Create(ctx, sandbox.Spec{Episode: "ok", Agent: "a", Policy: p}); !errors.Is(err, sandbox.ErrInvalid) {
		t.Errorf("unconfined seccomp: %v, want ErrInvalid", err)
	}
}
