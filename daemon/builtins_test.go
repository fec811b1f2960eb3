package daemon_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/mass-dev/mass/agents/episode"
	"github.com/mass-dev/mass/agents/model/scripted"
	"github.com/mass-dev/mass/daemon"
	"github.com/mass-dev/mass/daemon/config"
	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/docker"
	"github.com/mass-dev/mass/sandbox/image"
	"github.com/mass-dev/mass/sandbox/sandboxtest"
)

var quiet = slog.New(slog.DiscardHandler)

func TestBuiltinsModels(t *testing.T) {
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	b, err := daemon.NewBuiltins(cfg, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.Env.DefaultModel != scripted.Name || !b.Models.DryRun(scripted.Name) {
		t.Errorf("no models configured: default %q, want the scripted dry run", b.Env.DefaultModel)
	}
	c, err := b.Models.Client(scripted.Name)
	if err != nil || c.Model() != scripted.ModelID {
		t.Fatalf("scripted client = %v, %v", c, err)
	}
	if b.Env.Layout.Root != cfg.DataDir {
		t.Errorf("layout root %s, want %s", b.Env.Layout.Root, cfg.DataDir)
	}
	two, k := 2, 5
	cfg.Models = map[string]*config.Model{
		"a": {BaseURL: "http://127.0.0.1:8000/v1", Model: "m-a", TopK: &k},
		"b": {BaseURL: "http://127.0.0.1:8001/v1", Model: "m-b", MaxConcurrency: two},
	}
	b2, err := daemon.NewBuiltins(cfg, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	if b2.Env.DefaultModel != "" {
		t.Errorf("two models: default %q, want none", b2.Env.DefaultModel)
	}
	if _, err := b2.Models.Client(""); err == nil || !strings.Contains(err.Error(), "a, b, scripted") {
		t.Errorf("Client(\"\") = %v, want the choice listed", err)
	}
}

func TestModelConfig(t *testing.T) {
	temp, k, mt, think := 0.2, 5, 1024, false
	got := daemon.ModelConfig("qwen", &config.Model{BaseURL: "http://127.0.0.1:8000/v1", Model: "Qwen/Qwen3-8B", APIKeyEnv: "K",
		Temperature: &temp, TopK: &k, MaxTokens: &mt, EnableThinking: &think, Stream: true, MaxResponseBytes: 1 << 20})
	if err := got.Validate(); err != nil {
		t.Fatal(err)
	}
	if !got.Stream || got.MaxResponseBytes != 1<<20 {
		t.Errorf("ModelConfig = %+v, want stream on and the reply cap (defect 10: massd could not turn streaming on)", got)
	}
	if got.Name != "qwen" || *got.Temperature != temp || *got.TopK != k || *got.MaxTokens != mt || *got.EnableThinking {
		t.Errorf("ModelConfig = %+v, want the configured values", got)
	}
	if got, want := got.MaxConcurrency, config.DefaultModelConc; got != want {
		t.Errorf("max concurrency = %d, want the daemon default %d", got, want)
	}
	if got, want := got.Timeout, config.DefaultModelTimeout; got != want {
		t.Errorf("timeout = %s, want %s", got, want)
	}
	if got.TopP != nil {
		t.Errorf("unset top_p became %v, want nil (the agents/model default applies)", *got.TopP)
	}
}

// The reaper uses the builtins' one runtime and removes what an earlier
// massd with the same data directory left.
func TestBuiltinsReapOrphans(t *testing.T) {
	ctx := context.Background()
	cli, skip, err := sandboxtest.Engine(ctx, "builtins tests")
	if err != nil {
		t.Fatal(err)
	}
	if cli == nil {
		t.Skip(skip)
	}
	helper, err := sandboxtest.BuildHelper(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.DataDir, cfg.Sandbox.Helper, cfg.Sandbox.Image = t.TempDir(), helper, image.TestRef
	rt, err := docker.New(ctx, docker.Config{DaemonID: datadir.New(cfg.DataDir).SandboxDaemonID(), HelperPath: helper,
		Image: image.TestRef, Logger: quiet, Client: cli})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	id := episode.NewID()
	if err := rt.CreateWorkspace(ctx, sandbox.WorkspaceSpec{Episode: id}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Create(ctx, sandbox.Spec{Episode: id, Agent: "orchestrator", Policy: sandbox.DefaultPolicy()}); err != nil {
		t.Fatal(err)
	}
	if left, _ := rt.List(ctx, id); len(left) == 0 {
		t.Fatal("nothing to reap: the test setup made no containers")
	}
	b, err := daemon.NewBuiltins(cfg, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.ReapOrphans(ctx); err != nil {
		t.Fatal(err)
	}
	if left, err := rt.List(ctx, id); err != nil || len(left) != 0 {
		t.Errorf("after the reaper: %+v (%v)", left, err)
	}
	if b.Env.Runtime != sandbox.Runtime(b.Runtime) {
		t.Error("the episode environment has a runtime of its own")
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Runtime.List(ctx, id); err == nil {
		t.Error("the runtime still answers after Close")
	}
}
