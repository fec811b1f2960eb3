package cli

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/mass-dev/mass/agents/model/fakeopenai"
	"github.com/mass-dev/mass/daemon"
	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/config"
	"github.com/mass-dev/mass/daemon/daemontest"
	"github.com/mass-dev/mass/daemon/jobs"
	"github.com/mass-dev/mass/jobkind"
)

// TestModelListAndTest configures a model served by the fake OpenAI
// endpoint: model list shows it without secrets, model test reaches it and
// sees it call the offered tool.
func TestModelListAndTest(t *testing.T) {
	fake := fakeopenai.New(func(r *fakeopenai.Request) fakeopenai.Reply {
		if r.HasTool("echo") {
			return fakeopenai.Reply{Calls: []fakeopenai.Call{{Name: "echo", Arguments: `{"text":"ping"}`}}}
		}
		return fakeopenai.Reply{Content: "no tool"}
	}, fakeopenai.WithModelID("qwen-test"))
	if err := fake.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	cfg := daemontest.Config(t)
	t.Setenv("MASS_TEST_KEY", "sk-secret-value")
	cfg.Models = map[string]*config.Model{"qwen": {BaseURL: fake.URL(), Model: "qwen-test", APIKeyEnv: "MASS_TEST_KEY"},
		"down": {BaseURL: "http://127.0.0.1:1/v1", Model: "gone", MaxRetries: 1}}
	b, err := daemon.NewBuiltins(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	sock := daemontest.Start(t, daemon.Options{Config: cfg, Builtins: b, Kinds: []jobkind.Kind{jobs.WaitKind()}}).Config.Socket
	mc := func(args ...string) (string, error) { return run(t, append([]string{"--socket", sock}, args...)...) }

	out, err := mc("model", "list")
	if err != nil || !strings.Contains(out, "qwen-test") || !strings.Contains(out, fake.URL()) {
		t.Errorf("model list: %v\n%s", err, out)
	}
	if strings.Contains(out, "sk-secret") || strings.Contains(out, "MASS_TEST_KEY") {
		t.Errorf("model list shows a secret:\n%s", out)
	}
	out, err = mc("model", "test", "qwen", "--json")
	var res api.ModelTest
	if err != nil || json.Unmarshal([]byte(out), &res) != nil {
		t.Fatalf("model test: %v\n%s", err, out)
	}
	if !res.OK || !res.ToolCalls || res.Model != "qwen-test" || res.LatencyMS <= 0 {
		t.Errorf("model test = %+v, want reachable with tool calls", res)
	}
	if n := len(fake.Requests()); n != 1 {
		t.Errorf("fake endpoint got %d requests, want 1", n)
	}
	out, err = mc("model", "test", "down")
	if err == nil || !strings.Contains(out, "reachable:  no") {
		t.Errorf("model test of an endpoint that is down: %v\n%s", err, out)
	}
	if _, err := mc("model", "test", "nosuch"); !errors.Is(err, api.ErrNotFound) {
		t.Errorf("model test nosuch = %v, want not found", err)
	}
}
