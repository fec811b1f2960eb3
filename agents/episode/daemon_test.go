package episode

import (
	"context"
	"testing"

	"github.com/mass-dev/mass/daemon/config"
	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/docker"
	"github.com/mass-dev/mass/sandbox/image"
)

func TestModelConfig(t *testing.T) {
	temp, k, mt, think := 0.2, 5, 1024, false
	got := ModelConfig("qwen", &config.Model{BaseURL: "http://127.0.0.1:8000/v1", Model: "Qwen/Qwen3-8B", APIKeyEnv: "K",
		Temperature: &temp, TopK: &k, MaxTokens: &mt, EnableThinking: &think, Stream: true, MaxResponseBytes: 1 << 20})
	if err := got.Validate(); err != nil {
		t.Fatal(err)
	}
	if !got.Stream || got.MaxResponseBytes != 1<<20 {
		t.Errorf("ModelConfig = %+v, want stream on and the reply cap (defect 10: massd could not turn streaming on)", got)
	}
	if got.Name != "qwen" || *got.Temperature != temp || *got.TopK != k || got.MaxTokens != mt || *got.EnableThinking {
		t.Errorf("ModelConfig = %+v, want the configured values", got)
	}
	if got, want := got.MaxConcurrency, config.DefaultModelConc; got != want {
		t.Errorf("max concurrency = %d, want the daemon default %d", got, want)
	}
	if got, want := got.Timeout, config.DefaultModelTimeout; got != want {
		t.Errorf("timeout = %s, want %s", got, want)
	}
	if got.TopP != nil {
		t.Errorf("unset top_p became %v, want nil (the DESIGN.md default applies)", *got.TopP)
	}
}

func TestSandboxDaemonID(t *testing.T) {
	a, b := SandboxDaemonID("/var/lib/mass"), SandboxDaemonID("/var/lib/mass/")
	if a != b {
		t.Errorf("ids differ for the same directory: %s, %s", a, b)
	}
	if a == SandboxDaemonID("/srv/mass") {
		t.Error("different data dirs share an id")
	}
}

func TestReaper(t *testing.T) {
	needEngine(t)
	ctx := context.Background()
	cfg := config.Default()
	cfg.DataDir, cfg.Sandbox.Helper, cfg.Sandbox.Image = t.TempDir(), testHelper, image.TestRef
	rt, err := docker.New(ctx, docker.Config{DaemonID: SandboxDaemonID(cfg.DataDir), HelperPath: testHelper, Image: image.TestRef, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	id := NewID()
	if err := rt.CreateWorkspace(ctx, sandbox.WorkspaceSpec{Episode: id}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Create(ctx, sandbox.Spec{Episode: id, Agent: "orchestrator", Policy: sandbox.DefaultPolicy()}); err != nil {
		t.Fatal(err)
	}
	if left, _ := rt.List(ctx, id); len(left) == 0 {
		t.Fatal("nothing to reap: the test setup made no containers")
	}
	if err := Reaper(cfg, quiet)(ctx); err != nil {
		t.Fatal(err)
	}
	if left, err := rt.List(ctx, id); err != nil || len(left) != 0 {
		t.Errorf("after the reaper: %+v (%v)", left, err)
	}
}
