package docker

import (
	"context"
	"testing"

	"github.com/mass-dev/mass/sandbox/sandboxtest"
)

func TestConformance(t *testing.T) {
	rt := needEngine(t)
	sandboxtest.Run(t, sandboxtest.Harness{Runtime: rt, Image: testImage, Policy: testPolicy()})
}

// TestConformanceGVisor runs the suite under runsc where the engine has it
// registered (Debian: apt install runsc; runsc install; restart dockerd).
func TestConformanceGVisor(t *testing.T) {
	rt := needEngine(t)
	ok, err := rt.hasRuntime(context.Background(), "runsc")
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		t.Skip("gVisor (runsc) is not registered with this engine: the gVisor conformance run is SKIPPED")
	}
	p := testPolicy()
	p.Runtime = "runsc"
	sandboxtest.Run(t, sandboxtest.Harness{Runtime: rt, Image: testImage, Policy: p})
}
