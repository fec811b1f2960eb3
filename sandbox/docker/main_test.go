package docker

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"testing"

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
	os.Exit(sandboxtest.Main(m, "the sandbox tests", func(ctx context.Context, e sandboxtest.MainEnv) (func(), error) {
		testHelper, testSkip = e.Helper, e.Skip
		if e.Client == nil {
			return nil, nil
		}
		// The runtime's own client (NewClient), so that every test runs
		// with the engine deadlines massd has.
		rt, err := New(ctx, Config{
			DaemonID: fmt.Sprintf("test%d", os.Getpid()), HelperPath: testHelper, Image: testImage,
			Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})),
		})
		if err != nil {
			return nil, fmt.Errorf("docker runtime: %w", err)
		}
		testRT = rt
		// Leave nothing behind, even after a failed test.
		return func() {
			if _, err := testRT.ReapOrphans(context.Background(), func(string) bool { return false }); err != nil {
				fmt.Fprintf(os.Stderr, "reap test leftovers: %v\n", err)
			}
		}, nil
	}))
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
