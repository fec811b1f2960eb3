package docker

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/docker/docker/client"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/image"
)

// Shared by the tests: one runtime on the real engine, the helper built
// once, the busybox test image ensured once.
var (
	testRT     *Runtime
	testHelper string
	testSkip   string
)

const testImage = image.TestRef

func TestMain(m *testing.M) {
	os.Exit(setup(m))
}

func setup(m *testing.M) int {
	dir, err := os.MkdirTemp("", "mass-helper-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	testHelper = filepath.Join(dir, "mass-sandbox-helper")
	build := exec.Command("go", "build", "-trimpath", "-o", testHelper, "github.com/mass-dev/mass/sandbox/helper/cmd/mass-sandbox-helper")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build helper: %v\n%s", err, out)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err == nil {
		_, err = cli.Ping(ctx)
	}
	if err != nil {
		testSkip = fmt.Sprintf("NO DOCKER ENGINE REACHABLE (%v): the sandbox tests against the real engine are SKIPPED", err)
		fmt.Fprintln(os.Stderr, "!!!", testSkip)
		return m.Run()
	}
	if _, err := image.EnsureTest(ctx, cli); err != nil {
		fmt.Fprintf(os.Stderr, "ensure test image %s: %v\n", testImage, err)
		return 1
	}
	testRT, err = New(ctx, Config{
		DaemonID: fmt.Sprintf("test%d", os.Getpid()), HelperPath: testHelper, Image: testImage,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})),
		Client: cli,
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "docker runtime: %v\n", err)
		return 1
	}
	code := m.Run()
	// Leave nothing behind, even after a failed test.
	if _, err := testRT.ReapOrphans(context.Background(), func(string) bool { return false }); err != nil {
		fmt.Fprintf(os.Stderr, "reap test leftovers: %v\n", err)
	}
	return code
}

func needEngine(tb testing.TB) *Runtime {
	tb.Helper()
	if testRT == nil {
		tb.Skip(testSkip)
	}
	return testRT
}

func testPolicy() sandbox.Policy {
	p := sandbox.DefaultPolicy()
	p.MemoryBytes = 256 << 20
	p.DiskBytes = 64 << 20
	return p
}
