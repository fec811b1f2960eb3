package docker

import (
	"context"
	"testing"

	"github.com/mass-dev/mass/sandbox"
)

// eachRuntime runs f as a subtest on runc and, where the engine has it
// registered, on runsc (gVisor), with testPolicy naming that runtime. The
// runsc run is skipped loudly where gVisor is missing.
func eachRuntime(t *testing.T, f func(t *testing.T, pol sandbox.Policy)) {
	for _, name := range []string{sandbox.RuntimeRunc, sandbox.RuntimeRunsc} {
		t.Run(name, func(t *testing.T) {
			rt := needEngine(t)
			if ok, err := rt.hasRuntime(context.Background(), name); err != nil {
				t.Fatal(err)
			} else if !ok {
				t.Skipf("OCI runtime %s is not registered with this engine: SKIPPED (scripts/setup-host.sh registers runsc)", name)
			}
			p := testPolicy()
			p.Runtime = name
			f(t, p)
		})
	}
}
