package docker

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/image"
	"github.com/mass-dev/mass/sandbox/sandboxtest"
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
	if testHelper, err = sandboxtest.BuildHelper(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cli, skip, err := sandboxtest.Engine(ctx, "the sandbox tests")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if cli == nil {
		testSkip = skip
		fmt.Fprintln(os.Stderr, "!!!", testSkip)
		return m.Run()
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
