package cli

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mass-dev/mass/cycle/search"
	"github.com/mass-dev/mass/daemon"
	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/client"
	"github.com/mass-dev/mass/daemon/config"
	"github.com/mass-dev/mass/daemon/daemontest"
	"github.com/mass-dev/mass/jobkind"
	"github.com/mass-dev/mass/sandbox"
)

// writeWorkspace writes dir/workspace.tar and its manifest holding files
// (path → content; a content starting with "->" is a symbolic link).
func writeWorkspace(dir string, files map[string]string) error {
	f, err := os.Create(filepath.Join(dir, "workspace.tar"))
	if err != nil {
		return err
	}
	defer f.Close()
	tw := tar.NewWriter(f)
	var man []sandbox.FileInfo
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		body := files[n]
		if target, ok := strings.CutPrefix(body, "->"); ok {
			if err := tw.WriteHeader(&tar.Header{Name: n, Typeflag: tar.TypeSymlink, Linkname: target}); err != nil {
				return err
			}
			man = append(man, sandbox.FileInfo{Path: n, Type: "symlink"})
			continue
		}
		if err := tw.WriteHeader(&tar.Header{Name: n, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(body))}); err != nil {
			return err
		}
		tw.Write([]byte(body))
		sum := sha256.Sum256([]byte(body))
		man = append(man, sandbox.FileInfo{Path: n, Type: "file", Size: int64(len(body)), Mode: 0o644, SHA256: hex.EncodeToString(sum[:])})
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return writeJSONFile(filepath.Join(dir, "workspace.manifest.json"), man)
}

// twoWorkspacesKind records two finished episodes whose workspaces differ:
// one file added, one removed, one text file changed in one line of many,
// one turned into a link.
func twoWorkspacesKind() jobkind.Kind {
	long := func(mid string) string {
		var b strings.Builder
		for i := range 40 {
			if i == 20 {
				b.WriteString(mid + "\n")
				continue
			}
			b.WriteString("line " + string(rune('a'+i%26)) + "\n")
		}
		return b.String()
	}
	spaces := map[string]map[string]string{
		"a": {"keep.txt": "same\n", "gone.txt": "bye\n", "report.md": long("accuracy 0.71"), "run.py": "print(1)\n"},
		"b": {"keep.txt": "same\n", "new.csv": "x,y\n", "report.md": long("accuracy 0.93 \x1b[31m"), "run.py": "->/etc/passwd"},
	}
	return jobkind.Kind{Name: "two", Run: func(ctx context.Context, job jobkind.Job, rep jobkind.Reporter) error {
		for _, s := range []string{"a", "b"} {
			id := "e-" + s + "-" + job.ID
			dir := job.Layout.Episode(id)
			if err := os.MkdirAll(dir, 0o750); err != nil {
				return err
			}
			if err := writeWorkspace(dir, spaces[s]); err != nil {
				return err
			}
			rep.Episode(jobkind.EpisodeRecord{ID: id, JobID: job.ID, Status: "completed", Dir: dir})
		}
		return nil
	}}
}

func TestEpisodeDiff(t *testing.T) {
	sock := startDaemon(t, twoWorkspacesKind()).Socket
	cl := client.New(sock)
	j, err := cl.SubmitJob(context.Background(), api.JobRequest{Kind: "two"})
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); !api.Terminal(j.State); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("job never finished")
		}
		j, _ = cl.Job(context.Background(), j.ID)
	}
	a, b := "e-a-"+j.ID, "e-b-"+j.ID
	out, err := run(t, "--socket", sock, "episode", "diff", a, b)
	if err != nil {
		t.Fatalf("episode diff: %v\n%s", err, out)
	}
	for _, want := range []string{"1 added, 1 removed, 2 changed, 1 unchanged", "A new.csv", "D gone.txt",
		"M report.md", "M run.py (9 -> 0 bytes): file -> symlink", "-accuracy 0.71", "+accuracy 0.93 \u241b[31m", "@@ … @@"} {
		if !strings.Contains(out, want) {
			t.Errorf("diff lacks %q:\n%s", want, out)
		}
	}
	if strings.ContainsRune(out, 0x1b) || strings.Contains(out, "line a\n line b") || strings.Contains(out, "root:") {
		t.Errorf("diff shows an escape, whole-file context or a followed link:\n%s", out)
	}
	out, err = run(t, "--socket", sock, "episode", "diff", a, b, "--json", "--stat")
	var d workspaceDiff
	if err != nil || json.Unmarshal([]byte(out), &d) != nil || len(d.Changed) != 2 || d.Changed[0].Diff != "" {
		t.Errorf("diff --json --stat: %v %+v\n%s", err, d, out)
	}
	if _, err := run(t, "--socket", sock, "episode", "diff", a); err == nil {
		t.Error("diff of one episode succeeded")
	}
	if _, err := run(t, "--socket", sock, "episode", "diff", a, "e-missing"); err == nil || !strings.Contains(err.Error(), "e-missing") {
		t.Errorf("diff with a missing episode: %v, want an error naming it", err)
	}
}

// FuzzTrimContext: trimming never invents a changed line and keeps every
// one of the diff's changed lines.
func FuzzTrimContext(f *testing.F) {
	f.Add("a\nb\nc\nd\ne\nf\ng\nh\n", "a\nb\nc\nX\ne\nf\ng\nh\n")
	f.Add("", "x")
	f.Fuzz(func(t *testing.T, a, b string) {
		u := search.Unified("a", "b", a, b)
		got := trimContext(u, diffContext)
		count := func(s string) (n int) {
			for _, l := range strings.Split(s, "\n") {
				if (strings.HasPrefix(l, "+") || strings.HasPrefix(l, "-")) && !strings.HasPrefix(l, "+++") && !strings.HasPrefix(l, "---") {
					n++
				}
			}
			return n
		}
		if count(got) != count(u) {
			t.Fatalf("changed lines %d after trimming, %d before:\n%s\n---\n%s", count(got), count(u), u, got)
		}
	})
}

// TestRetentionAtStart: a massd started with retention.keep_last 1 removes
// the older episode's workspace export at start and keeps both records,
// so episode diff then names the missing export.
func TestRetentionAtStart(t *testing.T) {
	cfg := daemontest.Config(t)
	d := daemontest.Start(t, daemon.Options{Config: cfg, Kinds: []jobkind.Kind{twoWorkspacesKind()}})
	j, err := d.Client.SubmitJob(context.Background(), api.JobRequest{Kind: "two"})
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); !api.Terminal(j.State); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("job never finished")
		}
		j, _ = d.Client.Job(context.Background(), j.ID)
	}
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	cfg.Retention = config.Retention{KeepLast: 1}
	d2 := daemontest.Start(t, daemon.Options{Config: cfg, Kinds: []jobkind.Kind{twoWorkspacesKind()}})
	a, b := "e-a-"+j.ID, "e-b-"+j.ID
	tarOf := func(id string) string { return filepath.Join(cfg.DataDir, "episodes", id, "workspace.tar") }
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Lstat(tarOf(a)); errors.Is(err, os.ErrNotExist) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("retention never removed the older episode's workspace")
		}
	}
	if _, err := os.Lstat(tarOf(b)); err != nil {
		t.Errorf("the newest episode's workspace went too: %v", err)
	}
	for _, id := range []string{a, b} {
		if _, err := d2.Client.Episode(context.Background(), id); err != nil {
			t.Errorf("record of %s lost: %v", id, err)
		}
	}
	if _, err := os.Stat(filepath.Join(cfg.DataDir, "episodes", a, "workspace.manifest.json")); err != nil {
		t.Errorf("the manifest went with the export: %v", err)
	}
}
