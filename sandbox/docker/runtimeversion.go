package docker

import (
	"context"
	"os/exec"
	"strings"
	"time"

	"github.com/mass-dev/mass/sandbox"
)

// runtimeVersion is the first line of `PATH --version` of the OCI runtime
// (for runc the engine's own report), or a note saying why it is unknown.
// It runs the binary on this host: the engine's path names a host file.
func runtimeVersion(ctx context.Context, name, path, runc string) string {
	if name == sandbox.RuntimeRunc && runc != "" {
		return "runc " + runc
	}
	if path == "" {
		return "unknown (not registered)"
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		return "unknown (" + path + " --version: " + err.Error() + ")"
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return line
}
