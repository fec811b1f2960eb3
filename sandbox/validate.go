package sandbox

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mass-dev/mass/datadir"
)

// ValidID reports whether s can name an episode or agent: it ends up in
// container, volume and label names. It is the data dir's one id rule,
// datadir.ValidID.
func ValidID(s string) bool { return datadir.ValidID(s) }

// ParseUser splits a "uid:gid" policy user.
func ParseUser(s string) (uid, gid int, err error) {
	u, g, ok := strings.Cut(s, ":")
	uid, err1 := strconv.Atoi(u)
	gid, err2 := strconv.Atoi(g)
	if !ok || err1 != nil || err2 != nil || uid < 0 || gid < 0 {
		return 0, 0, fmt.Errorf("policy user %q: want numeric UID:GID: %w", s, ErrInvalid)
	}
	return uid, gid, nil
}

// Validate rejects policies that cannot be applied. It accepts weakened
// but well-formed policies (the isolation probes need them); Weaknesses
// lists those deviations.
func (p Policy) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("policy: "+format+": %w", append(args, ErrInvalid)...)
	}
	if p.Runtime == "" {
		return bad("runtime is empty; use %q, %q or %q", RuntimeAuto, RuntimeRunc, RuntimeRunsc)
	}
	if uid, _, err := ParseUser(p.User); err != nil {
		return err
	} else if uid == MainUID {
		return bad("user %q has the uid of the container's main process (%d), which the agent must not be able to signal or trace; pick another uid", p.User, MainUID)
	}
	switch {
	case p.Seccomp == "":
		return bad("seccomp is empty; use %q", SeccompMass)
	case strings.EqualFold(p.Seccomp, "unconfined"):
		return bad("seccomp %q is never allowed", p.Seccomp)
	}
	if p.GPUs < 0 || p.GPUs > MaxGPUs {
		return bad("gpus %d must be 0 to %d", p.GPUs, MaxGPUs)
	}
	if p.NetworkMode == "" {
		return bad("network_mode is empty; use %q", "none")
	}
	if strings.HasPrefix(p.NetworkMode, "container:") {
		return bad("network_mode %q would join another container", p.NetworkMode)
	}
	if p.Egress != nil {
		if p.NetworkMode != "none" {
			return bad("network_mode %q with egress: an egress box joins only its episode's proxy network; keep network_mode %q", p.NetworkMode, "none")
		}
		if err := p.Egress.Validate(); err != nil {
			return err
		}
	}
	if p.IPCMode == "" {
		return bad("ipc_mode is empty; use %q", "private")
	}
	if p.TmpfsBytes < 0 || p.PidsLimit < 0 || p.MemoryBytes < 0 || p.NanoCPUs < 0 || p.NoFile < 0 ||
		p.DiskBytes < 0 || p.ExecTimeout < 0 || p.OutputBytes < 0 {
		return bad("sizes and limits must not be negative")
	}
	if p.MemoryBytes > 0 && p.MemoryBytes < 6<<20 {
		return bad("memory_bytes %d is below the engine minimum of 6 MiB", p.MemoryBytes)
	}
	return nil
}

// Weaknesses lists where p is weaker than DefaultPolicy, one phrase each.
func (p Policy) Weaknesses() []string {
	var w []string
	if uid, _, err := ParseUser(p.User); err == nil && uid == 0 {
		w = append(w, "runs as root")
	}
	if !hasAll(p.CapDrop) {
		w = append(w, "capabilities not all dropped")
	}
	if len(p.CapAdd) > 0 {
		w = append(w, "adds capabilities "+strings.Join(p.CapAdd, ","))
	}
	if !p.NoNewPrivileges {
		w = append(w, "no_new_privileges off")
	}
	if p.Seccomp == SeccompEngine {
		w = append(w, "engine default seccomp profile (allows ptrace)")
	}
	if !p.ReadOnlyRootfs {
		w = append(w, "root filesystem writable")
	}
	if p.NetworkMode != "none" {
		w = append(w, "network "+p.NetworkMode)
	}
	if p.PidsLimit == 0 {
		w = append(w, "no pids limit")
	}
	if p.MemoryBytes == 0 {
		w = append(w, "no memory limit")
	}
	if p.NanoCPUs == 0 {
		w = append(w, "no cpu limit")
	}
	if p.IPCMode != "private" && p.IPCMode != "none" {
		w = append(w, "ipc "+p.IPCMode)
	}
	if p.TmpfsBytes == 0 {
		w = append(w, "no /tmp size cap")
	}
	if p.DiskBytes == 0 {
		w = append(w, "no workspace disk cap")
	}
	return w
}

func hasAll(caps []string) bool {
	for _, c := range caps {
		if strings.EqualFold(c, "ALL") {
			return true
		}
	}
	return false
}
