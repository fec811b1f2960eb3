// Command mass-k8s-seccomp prints the project's seccomp profile for a
// kubelet's seccomp directory (scripts/k8s-local.sh installs it as
// mass.json, which Config.SeccompLocalhost then names).
//
// The profile is printed in the OCI runtime spec's form, resolved for a
// box that holds no capability on this node's architecture and kernel.
// The engine's (Docker's) form conditions rules on capabilities, arches
// and kernel versions, which Docker resolves per container; containerd's
// CRI reads a Localhost profile straight into the OCI struct, dropping
// those conditions, so every conditional rule applied unconditionally:
// unshare, clone of namespaces and ptrace were allowed to every pod
// (the probes unshare_user and ptrace_denied failed on runc pods). A pod
// that adds a capability does not get the rules that capability opens.
package main

import (
	"fmt"
	"os"

	"github.com/mass-dev/mass/sandbox/kubernetes"
)

func main() {
	s, err := kubernetes.LocalhostSeccomp()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(s)
}
