package sandboxtest

import (
	"context"
	"fmt"

	"github.com/docker/docker/client"

	"github.com/mass-dev/mass/sandbox/image"
)

// HelperPackage is the import path of the in-container file helper.
const HelperPackage = "github.com/mass-dev/mass/sandbox/helper/cmd/mass-sandbox-helper"

// BuildHelper builds the static helper binary into dir and returns its path.
// Test mains call it once; it needs the go tool on PATH.
func BuildHelper(dir string) (string, error) { return BuildStatic(dir, HelperPackage) }

// Engine connects to the local Docker engine with API version negotiation
// and makes sure the test image exists. When no engine answers it returns a
// nil client and a loud skip message for the tests to print, not an error:
// tests may skip only when there is no engine.
func Engine(ctx context.Context, what string) (cli *client.Client, skip string, err error) {
	cli, err = client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err == nil {
		_, err = cli.Ping(ctx)
	}
	if err != nil {
		return nil, fmt.Sprintf("NO DOCKER ENGINE REACHABLE (%v): %s against the real engine are SKIPPED", err, what), nil
	}
	if _, err := image.EnsureTest(ctx, cli); err != nil {
		return nil, "", fmt.Errorf("ensure test image %s: %w", image.TestRef, err)
	}
	return cli, "", nil
}
