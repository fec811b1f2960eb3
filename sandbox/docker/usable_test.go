package docker

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/image"
)

// autoRuntime opens a runtime whose default policy is auto, unpinned, on
// img, with the usability cache in cache.
func autoRuntime(t *testing.T, img, cache string) *Runtime {
	t.Helper()
	base := needEngine(t)
	if ok, err := base.hasRuntime(context.Background(), sandbox.RuntimeRunsc); err != nil || !ok {
		t.Skip("runsc is not registered with this engine: auto has nothing to skip (scripts/setup-host.sh registers it): SKIPPED")
	}
	t.Setenv(sandbox.RuntimeEnv, "")
	t.Setenv(UsableCacheEnv, cache)
	p := testPolicy()
	p.Runtime = sandbox.RuntimeAuto
	rt, err := New(context.Background(), Config{
		DaemonID: fmt.Sprintf("test%d", os.Getpid()), HelperPath: testHelper, Image: img, Policy: p, Client: base.cli,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

// TestAutoSkipsUnusableRuntime: in the busybox test image python3 and the
// scientific stack are missing, so the usability commands fail in a runsc
// box and auto must fall back to runc, saying which commands failed; no
// pass is cached.
func TestAutoSkipsUnusableRuntime(t *testing.T) {
	cache := t.TempDir()
	rt := autoRuntime(t, testImage, cache)
	if got := rt.cfg.Policy.Runtime; got != sandbox.RuntimeRunc {
		t.Fatalf("auto on an image where the commands fail resolved to %q, want runc", got)
	}
	rep, err := rt.Report(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(rep.Warnings, "\n"), "usable_python3_stack") || !strings.Contains(rep.RuntimeChoice, "failed the usability commands") {
		t.Errorf("report does not say why runsc was skipped: choice %q, warnings %q", rep.RuntimeChoice, rep.Warnings)
	}
	if ents, _ := os.ReadDir(cache); len(ents) != 0 {
		t.Errorf("a failed usability run was cached: %v", ents)
	}
}

// TestAutoPicksUsableRunsc: on the agent image every command passes in a
// runsc box, auto keeps runsc and caches the pass by binary and image, and
// the next runtime reuses it.
func TestAutoPicksUsableRunsc(t *testing.T) {
	if _, err := needEngine(t).cli.ImageInspect(context.Background(), image.AgentRef); err != nil {
		t.Skipf("%s not built (massctl image build --agent): SKIPPED", image.AgentRef)
	}
	cache := t.TempDir()
	rt := autoRuntime(t, image.AgentRef, cache)
	if got := rt.cfg.Policy.Runtime; got != sandbox.RuntimeRunsc {
		rep, _ := rt.Report(context.Background())
		t.Fatalf("auto resolved to %q, want runsc; choice %q, warnings %q", got, rep.RuntimeChoice, rep.Warnings)
	}
	ents, _ := filepath.Glob(filepath.Join(cache, "*.json"))
	if len(ents) != 1 {
		t.Fatalf("cache holds %v, want one verdict", ents)
	}
	b, _ := os.ReadFile(ents[0])
	if !strings.Contains(string(b), `"ok": true`) {
		t.Errorf("cached verdict %s is not a pass", b)
	}
	rt2 := autoRuntime(t, image.AgentRef, cache)
	if rt2.cfg.Policy.Runtime != sandbox.RuntimeRunsc {
		t.Errorf("second auto resolution = %q, want runsc from the cache", rt2.cfg.Policy.Runtime)
	}
}
