package docker

import (
	"bufio"
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/sandboxtest"
)

// TestWorkspaceFillENOSPCBeforeOOM reproduces F5 with small caps: memory
// and disk caps equal, the workspace a tmpfs whose pages are charged to
// the writer. Filling it must end in ENOSPC at the cap with the box alive
// (not an OOM kill), and the pages must leave host memory when the
// workspace is removed.
func TestWorkspaceFillENOSPCBeforeOOM(t *testing.T) {
	eachRuntime(t, func(t *testing.T, pol sandbox.Policy) {
		rt := needEngine(t)
		pol.MemoryBytes, pol.DiskBytes, pol.TmpfsBytes = 48<<20, 48<<20, 8<<20
		h := sandboxtest.Harness{Runtime: rt, Image: testImage, Policy: pol}
		ep := h.NewWorkspace(t, sandbox.WorkspaceSpec{DiskBytes: pol.DiskBytes}, nil)
		sb := h.NewSandbox(t, ep, "fill")
		before := shmemBytes(t)
		res, err := sb.Exec(context.Background(), sandbox.ExecRequest{Argv: []string{"sh", "-c",
			"dd if=/dev/zero of=/workspace/fill bs=1M count=96 2>&1; echo dd=$?; ls -l /workspace/fill"}, Timeout: time.Minute})
		if err != nil {
			t.Fatalf("fill: %v", err)
		}
		out := string(res.Stdout)
		if res.ExitCode != 0 || !strings.Contains(out, "No space left on device") || !strings.Contains(out, "dd=1") {
			t.Fatalf("filling the workspace: exit %d (137 is the OOM killer), output %q, want ENOSPC with the box alive", res.ExitCode, out)
		}
		if got := sh(t, sb, "echo alive"); got != "alive" {
			t.Fatalf("box after the fill: %q", got)
		}
		filled := shmemBytes(t) - before
		if err := rt.KillEpisode(context.Background(), ep); err != nil {
			t.Fatal(err)
		}
		if err := rt.RemoveWorkspace(context.Background(), ep); err != nil {
			t.Fatal(err)
		}
		released := filled - (shmemBytes(t) - before)
		t.Logf("shared memory: +%d MiB after the fill, %d MiB released by the removal", filled>>20, released>>20)
		if filled > 32<<20 && released < filled/2 {
			t.Errorf("removing the workspace released %d of %d bytes of shared memory", released, filled)
		}
	})
}

// shmemBytes is the host's Shmem (tmpfs pages) from /proc/meminfo.
func shmemBytes(t *testing.T) int64 {
	t.Helper()
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "Shmem:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no Shmem in /proc/meminfo")
	return 0
}
