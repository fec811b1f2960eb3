package probe

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
	"github.com/mass-dev/mass/sandbox/docker"
	"github.com/mass-dev/mass/sandbox/image"
)

// Built once for every test: the static helper and probe binaries, and a
// client of the real engine (nil, with testSkip set, when none answers).
var (
	testHelper, testProbe string
	testEngine            *client.Client
	testSkip              string
)

func TestMain(m *testing.M) { os.Exit(setup(m)) }

func setup(m *testing.M) int {
	dir, err := os.MkdirTemp("", "mass-probe-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	testHelper = filepath.Join(dir, "mass-sandbox-helper")
	testProbe = filepath.Join(dir, "mass-probe")
	for out, pkg := range map[string]string{
		testHelper: "github.com/mass-dev/mass/sandbox/helper/cmd/mass-sandbox-helper",
		testProbe:  "github.com/mass-dev/mass/sandbox/probe/cmd/mass-probe",
	} {
		build := exec.Command("go", "build", "-trimpath", "-o", out, pkg)
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if b, err := build.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build %s: %v\n%s", pkg, err, b)
			return 1
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err == nil {
		_, err = c.Ping(ctx)
	}
	if err != nil {
		testSkip = fmt.Sprintf("NO DOCKER ENGINE REACHABLE (%v): the isolation probes are SKIPPED", err)
		fmt.Fprintln(os.Stderr, "!!!", testSkip)
		return m.Run()
	}
	if _, err := image.EnsureTest(ctx, c); err != nil {
		fmt.Fprintf(os.Stderr, "ensure test image: %v\n", err)
		return 1
	}
	testEngine = c
	code := m.Run()
	// Leave nothing behind, even after a failed or panicking test.
	if rt, err := docker.New(context.Background(), docker.Config{DaemonID: testDaemonID(), HelperPath: testHelper, Client: c}); err == nil {
		if _, err := rt.ReapOrphans(context.Background(), func(string) bool { return false }); err != nil {
			fmt.Fprintf(os.Stderr, "reap probe test leftovers: %v\n", err)
		}
	}
	return code
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
// runtime whose default policy is o.Policy.
func verify(t *testing.T, o Options) Report {
	t.Helper()
	if testEngine == nil {
		t.Skip(testSkip)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	rt, err := docker.New(ctx, docker.Config{
		DaemonID: testDaemonID(), HelperPath: testHelper, Image: image.TestRef,
		Policy: o.Policy, Client: testEngine,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	o.Runtime, o.Engine, o.Probe, o.Image = rt, testEngine, testProbe, image.TestRef
	rep, err := Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rep.Passed+rep.Failed, len(rep.Probes); got != want {
		t.Errorf("passed+failed = %d, want %d probes", got, want)
	}
	return rep
}
