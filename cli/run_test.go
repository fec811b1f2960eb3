package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	dockerclient "github.com/docker/docker/client"

	"github.com/mass-dev/mass/agents/episode"
	"github.com/mass-dev/mass/daemon"
	"github.com/mass-dev/mass/daemon/config"
	"github.com/mass-dev/mass/daemon/daemontest"
	"github.com/mass-dev/mass/jobkind"
	"github.com/mass-dev/mass/sandbox/image"
)

// TestRunScripted runs `massctl run --model scripted --json` against an
// in-process massd with the episode kind on the real Docker engine.
func TestRunScripted(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a real episode in containers; run without -short")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	eng, err := dockerclient.NewClientWithOpts(dockerclient.FromEnv, dockerclient.WithAPIVersionNegotiation())
	if err == nil {
		_, err = eng.Ping(ctx)
	}
	if err != nil {
		t.Skipf("NO DOCKER ENGINE REACHABLE (%v): massctl run test SKIPPED", err)
	}
	if _, err := image.EnsureTest(ctx, eng); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	helper := filepath.Join(tmp, "mass-sandbox-helper")
	build := exec.Command("go", "build", "-o", helper, "github.com/mass-dev/mass/sandbox/helper/cmd/mass-sandbox-helper")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build helper: %v\n%s", err, out)
	}
	cfg := config.Default()
	cfg.Socket, cfg.DataDir = filepath.Join(tmp, "massd.sock"), filepath.Join(tmp, "data")
	cfg.Sandbox.Image, cfg.Sandbox.Helper = image.TestRef, helper
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	builtins, err := daemon.NewBuiltins(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Nothing may outlive the test. Registered first, this runs after
		// the daemon stopped and closed its builtins.
		if reaper, err := daemon.NewBuiltins(cfg, log); err == nil {
			reaper.ReapOrphans(context.Background())
			reaper.Close()
		}
	})
	daemontest.Start(t, daemon.Options{Config: cfg, Builtins: builtins, Kinds: []jobkind.Kind{episode.Kind(builtins.Services())}, Logger: log})

	task := filepath.Join(tmp, "task")
	os.MkdirAll(filepath.Join(task, "data"), 0o755)
	os.WriteFile(filepath.Join(task, "data", "x.csv"), []byte("a,b\n1,2\n"), 0o644)
	spec := "id: cli-run\nprompt: summarise data/x.csv\ninputs:\n  - path: data\nprotected_paths:\n  - data\nlimits:\n  episode_wall_time: 5m\n  agent_turns: 20\n"
	os.WriteFile(filepath.Join(task, "task.yaml"), []byte(spec), 0o644)

	for i := range 2 { // the second run reuses the stored task
		var out bytes.Buffer
		app := App("test")
		app.Writer, app.ErrWriter = &out, &out
		err := app.RunContext(ctx, []string{"massctl", "--socket", cfg.Socket, "run", "--task", filepath.Join(task, "task.yaml"), "--model", "scripted", "--json"})
		if err != nil {
			t.Fatalf("run %d: %v\n%s", i, err, out.String())
		}
		var sum RunSummary
		if err := json.Unmarshal(out.Bytes(), &sum); err != nil {
			t.Fatalf("run %d: output is not the JSON summary: %v\n%s", i, err, out.String())
		}
		if !sum.Success || !sum.DryRun || sum.EpisodeID == "" || sum.Agents != 3 {
			t.Errorf("run %d summary = %+v, want a successful 3-agent dry run", i, sum)
		}
		if _, err := os.Stat(sum.WorkspaceExport); err != nil {
			t.Errorf("run %d: workspace export: %v", i, err)
		}
		var aud bytes.Buffer
		app = App("test")
		app.Writer, app.ErrWriter = &aud, &aud
		if err := app.RunContext(ctx, []string{"massctl", "--socket", cfg.Socket, "audit", sum.EpisodeID, "--json"}); err != nil {
			t.Fatalf("audit: %v\n%s", err, aud.String())
		}
		var rep struct {
			Delegation  int `json:"delegation"`
			CodeHandoff int `json:"code_handoff"`
		}
		if err := json.Unmarshal(aud.Bytes(), &rep); err != nil {
			t.Fatalf("audit output: %v\n%s", err, aud.String())
		}
		if rep.Delegation != 2 || rep.CodeHandoff != 1 {
			t.Errorf("audit = %+v, want delegation 2, code handoff 1", rep)
		}
	}
}
