package docker

import (
	"encoding/json"
	"slices"
	"sync"

	"github.com/moby/profiles/seccomp"
)

// ptraceSyscalls are the system calls that reach into another process's
// memory or state with only a ptrace access check. The mass profile allows
// them only to a container that holds CAP_SYS_PTRACE (a weakening): the
// engine's profile allows them to everyone on kernels from 4.8, so an agent
// could attach to its file helper between the helper's execve and its
// prctl(PR_SET_DUMPABLE, 0).
var ptraceSyscalls = []string{"ptrace", "process_vm_readv", "process_vm_writev", "kcmp"}

// massProfile is the engine's default seccomp profile (as
// github.com/moby/profiles/seccomp ships it) minus ptraceSyscalls in every
// rule not conditioned on CAP_SYS_PTRACE; a rule left with no names is
// dropped. Everything else, including the capability-, architecture- and
// kernel-conditioned rules the engine resolves per container, is unchanged.
func massProfile() *seccomp.Seccomp {
	p := seccomp.DefaultProfile()
	kept := p.Syscalls[:0]
	for _, s := range p.Syscalls {
		if !forPtraceCap(s) {
			// The profile uses only Names (the test checks that Name,
			// deprecated, stays empty).
			s.Names = slices.DeleteFunc(s.Names, func(n string) bool { return slices.Contains(ptraceSyscalls, n) })
			if len(s.Names) == 0 {
				continue
			}
		}
		kept = append(kept, s)
	}
	p.Syscalls = kept
	return p
}

// forPtraceCap reports whether a rule applies only to containers holding
// CAP_SYS_PTRACE.
func forPtraceCap(s *seccomp.Syscall) bool {
	return s.Includes != nil && slices.Contains(s.Includes.Caps, "CAP_SYS_PTRACE")
}

// massProfileJSON is massProfile as the JSON the engine takes in
// SecurityOpt, built once.
var massProfileJSON = sync.OnceValues(func() (string, error) {
	b, err := json.Marshal(massProfile())
	return string(b), err
})

// MassSeccompJSON is the project's seccomp profile (SeccompMass) in the
// engine's JSON format, which containerd's CRI also reads as a kubelet
// Localhost profile.
func MassSeccompJSON() (string, error) { return massProfileJSON() }
