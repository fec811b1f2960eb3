package probe

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/docker/docker/client"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/docker"
	"github.com/mass-dev/mass/sandbox/image"
	"github.com/mass-dev/mass/sandbox/sandboxtest"
)

// Built once for every test: the static helper and probe binaries, and a
// client of the real engine (nil, with testSkip set, when none answers).
var (
	testHelper, testProbe string
	testEngine            *client.Client
	testSkip              string
)

func TestMain(m *testing.M) {
	os.Exit(sandboxtest.Main(m, "the isolation probes", func(ctx context.Context, e sandboxtest.MainEnv) (func(), error) {
		testHelper, testSkip = e.Helper, e.Skip
		probe, err := sandboxtest.BuildStatic(e.Dir, "github.com/mass-dev/mass/sandbox/probe/cmd/mass-probe")
		if err != nil {
			return nil, err
		}
		testProbe, testEngine = probe, e.Client
		if e.Client == nil {
			return nil, nil
		}
		// Leave nothing behind, even after a failed or panicking test.
		return func() {
			rt, err := docker.New(context.Background(), docker.Config{DaemonID: testDaemonID(), HelperPath: testHelper, Client: e.Client})
			if err != nil {
				return
			}
			if _, err := rt.ReapOrphans(context.Background(), func(string) bool { return false }); err != nil {
				fmt.Fprintf(os.Stderr, "reap probe test leftovers: %v\n", err)
			}
		}, nil
	}))
}

// testHasRunsc reports whether the engine has gVisor registered.
func testHasRunsc() bool {
	if testEngine == nil {
		return false
	}
	info, err := testEngine.Info(context.Background())
	if err != nil {
		return false
	}
	_, ok := info.Runtimes[sandbox.RuntimeRunsc]
	return ok
}

func testDaemonID() string { return fmt.Sprintf("probetest%d", os.Getpid()) }

// testReference is the production policy with limits small enough that the
// bombs and fills stay cheap on a shared machine.
func testReference() sandbox.Policy {
	p := sandbox.DefaultPolicy()
	p.MemoryBytes = 256 << 20
	p.TmpfsBytes = 32 << 20
	p.DiskBytes = 32 << 20
	p.PidsLimit = 64
	return p
}

// verify runs the probes with o (Reference and Policy set) on a fresh
// runtime whose default policy is o.Policy, in o.Image (default the busybox
// test image).
func verify(t *testing.T, o Options) Report {
	t.Helper()
	if testEngine == nil {
		t.Skip(testSkip)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if o.Image == "" {
		o.Image = image.TestRef
	}
	rt, err := docker.New(ctx, docker.Config{
		DaemonID: testDaemonID(), HelperPath: testHelper, Image: o.Image,
		Policy: o.Policy, Client: testEngine, ReadableHelper: o.ReadableHelper,
		EngineMasks: o.EngineMasks,
		Logger:      slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	o.Runtime, o.Engine, o.Probe = rt, testEngine, testProbe
	rep, err := Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rep.Passed+rep.Failed, len(rep.Probes); got != want {
		t.Errorf("passed+failed = %d, want %d probes", got, want)
	}
	return rep
}
