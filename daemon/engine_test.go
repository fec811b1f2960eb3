package daemon_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/mass-dev/mass/daemon"
	"github.com/mass-dev/mass/daemon/daemontest"
	"github.com/mass-dev/mass/sandbox/sandboxtest"
)

// D2: healthz reports the engine: reachable with a latency on the real
// engine, unreachable (with the error) when an engine takes the
// connection and never answers. e9e71d1 said "ok" with no engine field.
func TestEngineHealth(t *testing.T) {
	ctx := context.Background()
	if cli, skip, err := sandboxtest.Engine(ctx, "engine health"); err != nil {
		t.Fatal(err)
	} else if cli == nil {
		t.Skip(skip)
	}
	b, err := daemon.NewBuiltins(daemontest.Config(t), quiet)
	if err != nil {
		t.Fatal(err)
	}
	d := daemontest.Start(t, daemon.Options{Builtins: b})
	h, err := d.Client.Health(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if h.Engine == nil || !h.Engine.Reachable || h.Engine.Error != "" {
		t.Errorf("healthz engine on the real engine: %+v", h.Engine)
	}

	dir, err := os.MkdirTemp("", "wedged")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ln, err := net.Listen("unix", filepath.Join(dir, "engine.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // takes connections, reads, never answers
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	t.Setenv("DOCKER_HOST", "unix://"+ln.Addr().String())
	wb, err := daemon.NewBuiltins(daemontest.Config(t), quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer wb.Close()
	if eh := wb.EngineHealth(ctx); eh.Reachable || eh.Error == "" {
		t.Errorf("engine health on a wedged engine: %+v, want unreachable with the error", eh)
	}
}
