package cli

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mass-dev/mass/daemon"
	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/daemontest"
	"github.com/mass-dev/mass/jobkind"
)

// recordKind records one episode the way the episode kind does: its
// directory with record files (and a planted link), a running row, then,
// once release is closed, the completed row with a summary.
func recordKind(release <-chan struct{}) jobkind.Kind {
	return jobkind.Kind{Name: "record", Run: func(ctx context.Context, job jobkind.Job, rep jobkind.Reporter) error {
		id := "e-test-" + job.ID
		dir := job.Layout.Episode(id)
		if err := os.MkdirAll(filepath.Join(dir, "manifests"), 0o750); err != nil {
			return err
		}
		for name, body := range map[string]string{"episode.json": `{"episode_id":"` + id + `"}`,
			"ledger.jsonl": "{\"seq\":1}\n", "manifests/orchestrator.json": "{}"} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o640); err != nil {
				return err
			}
		}
		if err := os.Symlink("/etc/passwd", filepath.Join(dir, "manifests", "evil.json")); err != nil {
			return err
		}
		if err := writeWorkspace(dir, map[string]string{"out.txt": "x\n"}); err != nil {
			return err
		}
		rep.Episode(jobkind.EpisodeRecord{ID: id, JobID: job.ID, Status: "running", Dir: dir})
		select {
		case <-release:
		case <-ctx.Done():
			return ctx.Err()
		}
		rep.Episode(jobkind.EpisodeRecord{ID: id, JobID: job.ID, Status: "completed", Dir: dir,
			Summary: map[string]any{"exit": "completed", "success": true, "model": "scripted", "model_calls": 7}})
		return nil
	}}
}

func TestEpisodeCommands(t *testing.T) {
	release := make(chan struct{})
	cfg := daemontest.Config(t)
	b, err := daemon.NewBuiltins(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	d := daemontest.Start(t, daemon.Options{Config: cfg, Builtins: b, Kinds: []jobkind.Kind{recordKind(release)},
		ReapOrphans: func(context.Context, jobkind.Recovery, func(string, int)) error { return nil }})
	sock := d.Config.Socket
	mc := func(args ...string) (string, error) { return run(t, append([]string{"--socket", sock}, args...)...) }
	out, err := mc("job", "start", "record")
	if err != nil {
		t.Fatalf("job start: %v\n%s", err, out)
	}
	jobID := strings.TrimSpace(out)
	epID := "e-test-" + jobID
	var es []api.Episode
	for deadline := time.Now().Add(10 * time.Second); len(es) == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the episode was never recorded")
		}
		out, err = mc("episode", "list", "--json")
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(out), &es); err != nil {
			t.Fatalf("episode list --json: %v\n%s", err, out)
		}
	}
	if _, err := mc("episode", "rm", epID); !errors.Is(err, api.ErrConflict) || !strings.Contains(err.Error(), "massctl job cancel "+jobID) {
		t.Errorf("rm of a running episode = %v, want a conflict naming the job to cancel", err)
	}
	close(release)
	if out, err := mc("job", "watch", jobID); err != nil {
		t.Fatalf("job watch: %v\n%s", err, out)
	}
	out, err = mc("episode", "list")
	if err != nil || !strings.Contains(out, epID) || !strings.Contains(out, "completed") || !strings.Contains(out, "scripted") {
		t.Errorf("episode list: %v\n%s", err, out)
	}
	out, err = mc("episode", "show", epID)
	if err != nil || !strings.Contains(out, "calls:    7 model") || !strings.Contains(out, "success true") {
		t.Errorf("episode show: %v\n%s", err, out)
	}
	out, err = mc("episode", "files", epID, "--json")
	var fs []api.EpisodeFile
	if err != nil || json.Unmarshal([]byte(out), &fs) != nil {
		t.Fatalf("episode files: %v\n%s", err, out)
	}
	var names []string
	for _, f := range fs {
		names = append(names, f.Name)
	}
	if got, want := strings.Join(names, ","), "episode.json,ledger.jsonl,workspace.manifest.json,workspace.tar,manifests/orchestrator.json"; got != want {
		t.Errorf("files = %s, want %s (links left out)", got, want)
	}
	if out, err := mc("episode", "files", epID, "ledger.jsonl"); err != nil || out != "{\"seq\":1}\n" {
		t.Errorf("episode files ID ledger.jsonl = %q, %v", out, err)
	}
	if out, err := mc("episode", "rm", epID); err != nil || !strings.Contains(out, "removed the workspace of episode "+epID) {
		t.Fatalf("episode rm: %v\n%s", err, out)
	}
	if _, err := os.Lstat(filepath.Join(cfg.DataDir, "episodes", epID, "workspace.tar")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("workspace.tar still there after rm: %v", err)
	}
	if out, err := mc("episode", "files", epID, "ledger.jsonl"); err != nil || out != "{\"seq\":1}\n" {
		t.Errorf("rm without --purge lost the ledger: %q, %v", out, err)
	}
	if out, err := mc("episode", "rm", epID); err != nil || !strings.Contains(out, "nothing removed") {
		t.Errorf("second rm: %v\n%s", err, out)
	}
	if out, err := mc("episode", "rm", epID, "--purge"); err != nil || !strings.Contains(out, "removed episode "+epID) {
		t.Fatalf("episode rm --purge: %v\n%s", err, out)
	}
	if _, err := os.Lstat(filepath.Join(cfg.DataDir, "episodes", epID)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("episode folder still there after rm: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(cfg.DataDir, "episodes", "*")); len(left) != 0 {
		t.Errorf("left in episodes/: %v", left)
	}
	if _, err := mc("episode", "show", epID); !errors.Is(err, api.ErrNotFound) {
		t.Errorf("show after rm = %v, want not found", err)
	}
	if _, err := os.Stat("/etc/passwd"); err != nil {
		t.Errorf("rm followed the planted link: %v", err)
	}

	out, err = mc("model", "list", "--json")
	var ms []api.Model
	if err != nil || json.Unmarshal([]byte(out), &ms) != nil {
		t.Fatalf("model list: %v\n%s", err, out)
	}
	found := false
	for _, m := range ms {
		if m.Name == "scripted" {
			found = m.Default && m.DryRun
		} else if m.Default {
			t.Errorf("model %s is default too: %+v", m.Name, ms)
		}
	}
	if !found {
		t.Errorf("models = %+v, want the scripted dry-run model as default", ms)
	}
}
