package sandboxtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"testing"
	"time"

	"github.com/docker/docker/client"

	"github.com/mass-dev/mass/sandbox"
)

// MainEnv is what Main hands a Docker-backed test binary's setup.
type MainEnv struct {
	Dir    string         // temporary directory for binaries; removed after the tests
	Helper string         // the static mass-sandbox-helper, built into Dir
	Client *client.Client // the real engine; nil when none answers
	Skip   string         // with no engine: the loud message engine tests skip with
}

// Main is the TestMain of a test binary that runs against the real Docker
// engine: it builds the helper, connects to the engine and ensures the test
// image, calls setup, runs the tests, then the cleanup setup returned (which
// reaps what the tests left, even after a failure). setup is called with a
// nil Client and Skip set when no engine answers; the tests still run and
// skip loudly. what names the tests in the skip message.
func Main(m *testing.M, what string, setup func(ctx context.Context, e MainEnv) (cleanup func(), err error)) int {
	dir, err := os.MkdirTemp("", "mass-test-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	PinRunc()
	e := MainEnv{Dir: dir}
	if e.Helper, err = BuildHelper(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if e.Client, e.Skip, err = Engine(ctx, what); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if e.Client == nil {
		fmt.Fprintln(os.Stderr, "!!!", e.Skip)
	}
	cleanup, err := setup(ctx, e)
	if err != nil {
		fmt.Fprintf(os.Stderr, "test setup: %v\n", err)
		return 1
	}
	code := m.Run()
	if cleanup != nil {
		cleanup()
	}
	return code
}

// PinRunc makes sandbox.RuntimeAuto resolve to runc in this process and the
// massd and massctl it starts, unless $MASS_SANDBOX_RUNTIME already says
// otherwise: tests outside the sandbox suite stay fast, and the suite's
// gVisor runs name runsc explicitly.
func PinRunc() {
	if os.Getenv(sandbox.RuntimeEnv) == "" {
		os.Setenv(sandbox.RuntimeEnv, sandbox.RuntimeRunc)
	}
}

// BuildStatic builds the command package pkg as a static binary into dir
// and returns its path (named after the package's last element).
func BuildStatic(dir, pkg string) (string, error) {
	p := filepath.Join(dir, path.Base(pkg))
	build := exec.Command("go", "build", "-trimpath", "-o", p, pkg)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s: %w\n%s", pkg, err, out)
	}
	return p, nil
}
