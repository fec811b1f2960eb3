package taskspec

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeSpec(t testing.TB, dir, inputs string) string {
	t.Helper()
	p := filepath.Join(dir, "task.yaml")
	spec := "id: t1\nprompt: p\ninputs: " + inputs + "\nlimits: {episode_wall_time: 1m, agent_turns: 3}\n"
	if err := os.WriteFile(p, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Defect 3: with t/l -> /etc and inputs [l/passwd], validate and add both
// accepted the spec and the upload carried the host's passwd.
func TestLoadRefusesSymlinkedParent(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink("/etc", filepath.Join(dir, "l")); err != nil {
		t.Fatal(err)
	}
	p := writeSpec(t, dir, "[l/passwd]")
	_, err := Load(p)
	if err == nil || !strings.Contains(err.Error(), `"l" is a symbolic link`) {
		t.Fatalf("Load = %v, want a symlink error naming l", err)
	}
	s, perr := Parse([]byte("id: t1\nprompt: p\ninputs: [l/passwd]\nlimits: {episode_wall_time: 1m, agent_turns: 3}\n"))
	if perr != nil {
		t.Fatal(perr)
	}
	s.Dir = dir
	if _, err := s.Files(); !errors.Is(err, errSymlink) {
		t.Fatalf("Files = %v, want a symlink error", err)
	}
}

func TestLoadRefusesSymlinkedWorkflowParent(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink("/etc", filepath.Join(dir, "w")); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "task.yaml")
	spec := "id: t1\nprompt: p\nworkflow: w/hostname\nlimits: {episode_wall_time: 1m, agent_turns: 3}\n"
	if err := os.WriteFile(p, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("Load = %v, want a symlink error", err)
	}
}

// Defect 9: a task's files must fit in the workspace export.
func TestLoadRefusesInputsLargerThanExport(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "big.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxInputBytes + 1); err != nil { // sparse on disk
		t.Fatal(err)
	}
	f.Close()
	p := writeSpec(t, dir, "[big.bin]")
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), "the limit is") {
		t.Fatalf("Load = %v, want the input-size limit", err)
	}
}

// FuzzSpecPathSymlinks builds the input path's directories with a
// symbolic link (to a directory outside the spec's) at every position the
// mask selects, then checks that Load and Files accept a spec only when no
// component is a link, and that everything listed lies below the spec dir.
func FuzzSpecPathSymlinks(f *testing.F) {
	f.Add("l/passwd", uint8(1))
	f.Add("a/b/c.txt", uint8(2))
	f.Add("a/b/c.txt", uint8(4))
	f.Add("a/b", uint8(0))
	f.Add("d", uint8(1))
	f.Fuzz(func(t *testing.T, rel string, mask uint8) {
		parts := strings.Split(rel, "/")
		if len(parts) > 6 || relPathProblem(rel) != "" {
			return
		}
		for _, p := range parts {
			if p == "" || p == "." || strings.ContainsAny(p, "\x00\\") || len(p) > 40 || p == FileName || p == "task.yaml" {
				return
			}
		}
		root := t.TempDir()
		dir, outside := filepath.Join(root, "spec"), filepath.Join(root, "outside")
		for _, d := range []string{dir, outside} {
			if err := os.MkdirAll(filepath.Join(d, filepath.Join(parts[:len(parts)-1]...)), 0o755); err != nil {
				return
			}
			if err := os.WriteFile(filepath.Join(d, filepath.FromSlash(rel)), []byte("x"), 0o644); err != nil {
				return
			}
		}
		linked := false
		for i := len(parts) - 1; i >= 0; i-- {
			if mask&(1<<i) == 0 {
				continue
			}
			at := filepath.Join(dir, filepath.Join(parts[:i+1]...))
			if _, err := os.Lstat(at); err != nil {
				continue // below an earlier link
			}
			os.RemoveAll(at)
			if err := os.Symlink(filepath.Join(outside, filepath.Join(parts[:i+1]...)), at); err != nil {
				t.Fatal(err)
			}
			linked = true
		}
		s, err := Load(writeSpec(t, dir, "["+strconvQuote(rel)+"]"))
		if err != nil {
			return
		}
		if linked {
			t.Fatalf("Load accepted %q with a symbolic link on the path (mask %b)", rel, mask)
		}
		files, err := s.Files()
		if err != nil {
			t.Fatalf("Load accepted but Files failed: %v", err)
		}
		for _, name := range files {
			real, err := filepath.EvalSymlinks(filepath.Join(dir, name))
			if err != nil || !strings.HasPrefix(real, dir+string(filepath.Separator)) {
				t.Fatalf("file %q resolves to %q (%v), outside %s", name, real, err, dir)
			}
		}
	})
}

func strconvQuote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

// Also-list: a second document, or text after a JSON spec, was ignored.
func TestParseRefusesMoreThanOneDocument(t *testing.T) {
	one := "id: t1\nprompt: p\nlimits: {episode_wall_time: 1m, agent_turns: 3}\n"
	for _, data := range []string{
		one + "---\nid: t2\n",
		`{"id":"j1","prompt":"p","limits":{"episode_wall_time":"10m","agent_turns":3}} {"id":"j2"}`,
		`{"id":"j1","prompt":"p","limits":{"episode_wall_time":"10m","agent_turns":3}}` + "\n---\ngarbage: [",
	} {
		if _, err := Parse([]byte(data)); err == nil || !strings.Contains(err.Error(), "exactly one document") {
			t.Errorf("Parse(%q) = %v, want a one-document error", data, err)
		}
	}
	if _, err := Parse([]byte("---\n" + one)); err != nil {
		t.Errorf("a leading document marker: %v", err)
	}
}
