package kubernetes

import (
	"encoding/json"
	"fmt"

	"github.com/moby/profiles/seccomp"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/mass-dev/mass/sandbox/docker"
)

// LocalhostSeccomp is the project's seccomp profile as a kubelet Localhost
// profile: the OCI runtime spec's form of docker.MassSeccompJSON, resolved
// (as the engine resolves it per container) for a process that holds no
// capability, on this machine's architecture and kernel. It must be made
// on the node it is installed on. containerd's CRI reads a Localhost file
// straight into the OCI struct: a profile in the engine's form there loses
// its conditions and every rule meant only for CAP_SYS_ADMIN or
// CAP_SYS_PTRACE (unshare, namespace clones, ptrace) applies to all.
func LocalhostSeccomp() (string, error) {
	src, err := docker.MassSeccompJSON()
	if err != nil {
		return "", err
	}
	// No capability in any set: the boxes drop ALL. The keeper's four
	// (CHOWN, FOWNER, DAC_READ_SEARCH, DAC_OVERRIDE) open no rule the
	// keeper uses.
	rs := &specs.Spec{Process: &specs.Process{Capabilities: &specs.LinuxCapabilities{}}}
	oci, err := seccomp.LoadProfile(src, rs)
	if err != nil {
		return "", fmt.Errorf("resolve the seccomp profile: %w", err)
	}
	b, err := json.MarshalIndent(oci, "", "  ")
	return string(b), err
}
