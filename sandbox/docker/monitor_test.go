package docker

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/sandboxtest"
)

func TestDiskMonitor(t *testing.T) {
	base := needEngine(t)
	ctx := context.Background()
	rt, err := New(ctx, Config{DaemonID: base.cfg.DaemonID, HelperPath: testHelper, Image: testImage, Client: base.cli,
		Logger: base.cfg.Logger, DiskMode: DiskMonitor, MonitorInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	rep, err := rt.Report(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.DiskCapEnforced; len(got) < 9 || got[:9] != "monitored" {
		t.Errorf("report disk cap %q, want the monitor described", got)
	}
	ep := sandboxtest.Episode(t)
	if err := rt.CreateWorkspace(ctx, sandbox.WorkspaceSpec{Episode: ep, DiskBytes: 2 << 20}, nil); err != nil {
		t.Fatal(err)
	}
	defer rt.RemoveWorkspace(ctx, ep)
	sb, err := rt.Create(ctx, sandbox.Spec{Episode: ep, Agent: "filler", Image: testImage, Policy: testPolicy()})
	if err != nil {
		t.Fatal(err)
	}
	res, err := sb.Exec(ctx, sandbox.ExecRequest{Argv: []string{"sh", "-c", "mkdir hidden && dd if=/dev/urandom of=hidden/f bs=1M count=1 2>/dev/null && chmod 000 hidden && echo ok"}})
	if err != nil || string(res.Stdout) != "ok\n" {
		t.Fatalf("write 1 MiB: %+v %v", res, err)
	}
	n, err := rt.Usage(ctx, ep)
	if err != nil || n < 1<<20 || n > 2<<20 {
		t.Errorf("usage after 1 MiB in an unreadable dir = %d, %v; want about 1 MiB", n, err)
	}
	if rt.OverCap(ep) {
		t.Errorf("over cap at 1 MiB of 2 MiB")
	}
	_, _ = sb.Exec(ctx, sandbox.ExecRequest{Argv: []string{"sh", "-c", "dd if=/dev/urandom of=big bs=1M count=4 2>/dev/null; sleep 30"}})
	if !rt.OverCap(ep) {
		t.Errorf("4 MiB in a 2 MiB workspace not flagged")
	}
	// KillEpisode runs in the monitor; wait for the removal to land.
	for i := 0; ; i++ {
		_, err := rt.cli.ContainerInspect(ctx, sb.ID())
		if isNotFound(err) {
			break
		}
		if i == 100 {
			t.Fatalf("agent of an episode over its cap still exists: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, err := sb.Exec(ctx, sandbox.ExecRequest{Argv: []string{"true"}}); !errors.Is(err, sandbox.ErrNotFound) {
		t.Errorf("exec in a removed agent: %v, want ErrNotFound", err)
	}
}
