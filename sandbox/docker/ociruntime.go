package docker

import (
	"context"
	"fmt"
	"os"

	"github.com/mass-dev/mass/sandbox"
)

// resolveRuntime maps a policy's runtime onto an OCI runtime the engine
// runs: sandbox.RuntimeAuto becomes the runtime $MASS_SANDBOX_RUNTIME pins,
// else runsc when the engine has it registered and ordinary commands work
// in its boxes (usableOn), else runc. choice says
// how (for the policy report); note is a warning when auto fell back.
func (r *Runtime) resolveRuntime(ctx context.Context, name string) (resolved, choice, note string, err error) {
	if name != sandbox.RuntimeAuto {
		return name, "named " + name, "", nil
	}
	switch pin := os.Getenv(sandbox.RuntimeEnv); pin {
	case "":
	case sandbox.RuntimeRunc, sandbox.RuntimeRunsc:
		return pin, fmt.Sprintf("auto, pinned to %s by $%s", pin, sandbox.RuntimeEnv), "", nil
	default:
		return "", "", "", fmt.Errorf("$%s=%q: want %s or %s: %w", sandbox.RuntimeEnv, pin, sandbox.RuntimeRunc, sandbox.RuntimeRunsc, sandbox.ErrInvalid)
	}
	ok, err := r.hasRuntime(ctx, sandbox.RuntimeRunsc)
	if err != nil {
		return "", "", "", err
	}
	if ok {
		usableOK, checked, why := r.usableOn(ctx, sandbox.RuntimeRunsc)
		switch {
		case !usableOK:
			r.log.Warn("auto runtime: runsc skipped, ordinary commands fail in its boxes", "failed", why)
			return sandbox.RuntimeRunc, "auto: runsc is registered but failed the usability commands, runc",
				"gVisor (runsc) is registered but ordinary commands fail in its boxes (" + why + "), so agent containers run on runc and share the host kernel; install a current runsc with scripts/setup-host.sh", nil
		case !checked:
			r.log.Warn("auto runtime: usability of runsc not checked", "why", why)
			return sandbox.RuntimeRunsc, "auto: runsc (gVisor) is registered with the engine (usability not checked: " + why + ")", "", nil
		}
		return sandbox.RuntimeRunsc, "auto: runsc (gVisor) is registered with the engine and its boxes run the usability commands", "", nil
	}
	return sandbox.RuntimeRunc, "auto: runsc is not registered, runc",
		"gVisor (runsc) is not registered with the engine, so agent containers run on runc and share the host kernel; install it with scripts/setup-host.sh", nil
}

// policyRuntime resolves a box's policy runtime: auto takes the runtime's
// own resolution, made once in New.
func (r *Runtime) policyRuntime(name string) string {
	if name == sandbox.RuntimeAuto {
		return r.cfg.Policy.Runtime
	}
	return name
}
