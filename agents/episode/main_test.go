package episode

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mass-dev/mass/agents/model"
	"github.com/mass-dev/mass/agents/model/fakeopenai"
	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/docker"
	"github.com/mass-dev/mass/sandbox/image"
	"github.com/mass-dev/mass/sandbox/sandboxtest"
	"github.com/mass-dev/mass/taskspec"
)

// One Docker runtime on the real engine for all tests, with the helper
// built once and the busybox test image ensured once.
var (
	testRT     *docker.Runtime
	testHelper string
	testSkip   string
	quiet      = slog.New(slog.NewTextHandler(io.Discard, nil))
)

func TestMain(m *testing.M) {
	os.Exit(sandboxtest.Main(m, "episode tests", func(ctx context.Context, e sandboxtest.MainEnv) (func(), error) {
		testHelper, testSkip = e.Helper, e.Skip
		if e.Client == nil {
			return nil, nil
		}
		rt, err := docker.New(ctx, docker.Config{
			DaemonID: fmt.Sprintf("c1test%d", os.Getpid()), HelperPath: testHelper, Image: image.TestRef,
			Logger: quiet, Client: e.Client,
		})
		if err != nil {
			return nil, fmt.Errorf("docker runtime: %w", err)
		}
		testRT = rt
		return func() {
			if n, err := testRT.ReapOrphans(context.Background(), func(string) bool { return false }); err != nil || n > 0 {
				fmt.Fprintf(os.Stderr, "reaped %d test leftovers (%v)\n", n, err)
			}
		}, nil
	}))
}

func needEngine(t testing.TB) {
	t.Helper()
	if testRT == nil {
		t.Skip(testSkip)
	}
}

// fakeModel serves p and returns Deps whose only model, "fake", points at it.
func fakeModel(t testing.TB, p fakeopenai.Policy, mod func(*model.Config)) (Deps, *fakeopenai.Server) {
	t.Helper()
	needEngine(t)
	s := fakeopenai.New(p)
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	cfg := model.Config{Name: "fake", BaseURL: s.URL(), Model: "fake-model", Backoff: time.Millisecond, Timeout: 20 * time.Second, MaxConcurrency: 64}
	if mod != nil {
		mod(&cfg)
	}
	c, err := model.New(cfg, quiet)
	if err != nil {
		t.Fatal(err)
	}
	return Deps{
		Runtime: testRT, DaemonID: "c1test", Image: image.TestRef, Log: quiet,
		Models: func(name string) (model.Client, error) {
			if name != "fake" {
				return nil, fmt.Errorf("no model %q", name)
			}
			return c, nil
		},
	}, s
}

// testTask writes a task directory with one input file and a protected one.
func testTask(t testing.TB, wall time.Duration) *taskspec.Spec {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "data", "truth.txt"), []byte("42\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.md"), []byte("# notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return &taskspec.Spec{
		ID: "t1", Prompt: "Write and run a tiny Python program.", Dir: dir,
		Inputs:         []taskspec.Input{{Path: "data"}, {Path: "notes.md"}},
		ProtectedPaths: []string{"data"},
		Limits:         taskspec.Limits{EpisodeWallTime: wall, AgentTurns: 30},
	}
}

func runEpisode(t testing.TB, d Deps, spec *taskspec.Spec, workflow string) (Status, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ep")
	st, err := Run(context.Background(), d, Options{Task: spec, TaskID: spec.ID, Model: "fake", Workflow: workflow, Dir: dir})
	if err != nil {
		t.Fatalf("episode: %v", err)
	}
	return st, dir
}

// leftovers lists the episode's containers and volumes still on the engine.
func leftovers(t testing.TB, id string) []sandbox.Info {
	t.Helper()
	infos, err := testRT.List(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return infos
}
