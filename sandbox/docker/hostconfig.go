package docker

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"

	"github.com/mass-dev/mass/sandbox"
)

// HelperMount is where the helper binary appears inside every container.
const HelperMount = sandbox.HelperMount

// maskedPaths replaces the engine's default masked paths (a set list
// replaces them, so they are repeated here) and adds the kernel's build
// configuration, command line and crash-dump layout, which tell an agent
// exactly which kernel and boot it attacks (F6).
var maskedPaths = []string{
	"/proc/asound", "/proc/acpi", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
	"/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi", "/sys/firmware",
	"/sys/devices/virtual/powercap", "/proc/interrupts",
	"/proc/cmdline", "/proc/config.gz", "/sys/kernel/vmcoreinfo",
}

// RunscPidsOverhead is added to the pids limit of a gVisor container: the
// host's pids cgroup counts the threads of runsc's own sandbox, gofer and
// stub processes (37 with one guest process on the ptrace platform), and a
// limit that leaves them too few makes `runsc start` fail ("urpc method
// containerManager.StartRoot failed: EOF" at 32). Guest processes are still
// capped: the sentry's tasks run on those host threads.
const RunscPidsOverhead = 128

// hostConfig maps every Policy field onto the engine's HostConfig. The only
// mounts are the workspace volume and the read-only helper binary.
func hostConfig(p sandbox.Policy, volumeName, helperPath string) (*container.HostConfig, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	secOpt := []string{}
	if p.NoNewPrivileges {
		secOpt = append(secOpt, "no-new-privileges:true")
	}
	switch p.Seccomp {
	case sandbox.SeccompEngine:
		// No option: the engine applies its built-in profile.
	case sandbox.SeccompMass:
		prof, err := massProfileJSON()
		if err != nil {
			return nil, fmt.Errorf("build the mass seccomp profile: %w", err)
		}
		secOpt = append(secOpt, "seccomp="+prof)
	default:
		prof, err := loadSeccomp(p.Seccomp)
		if err != nil {
			return nil, err
		}
		secOpt = append(secOpt, "seccomp="+prof)
	}
	tmpfs := map[string]string{}
	opts := []string{"rw", "nosuid", "nodev", "mode=1777"}
	if p.TmpfsBytes > 0 {
		opts = append(opts, "size="+strconv.FormatInt(p.TmpfsBytes, 10))
	}
	tmpfs["/tmp"] = strings.Join(opts, ",")
	init := p.Init
	pids := p.PidsLimit
	if pids > 0 && p.Runtime == sandbox.RuntimeRunsc {
		pids += RunscPidsOverhead
	}
	hc := &container.HostConfig{
		NetworkMode:    container.NetworkMode(p.NetworkMode),
		IpcMode:        container.IpcMode(p.IPCMode),
		CapDrop:        append([]string(nil), p.CapDrop...),
		CapAdd:         append([]string(nil), p.CapAdd...),
		SecurityOpt:    secOpt,
		ReadonlyRootfs: p.ReadOnlyRootfs,
		Tmpfs:          tmpfs,
		Init:           &init,
		Runtime:        p.Runtime,
		Privileged:     false,
		LogConfig:      container.LogConfig{Type: "none"},
		MaskedPaths:    append([]string(nil), maskedPaths...),
		Mounts: []mount.Mount{
			{Type: mount.TypeVolume, Source: volumeName, Target: sandbox.WorkspaceMount,
				VolumeOptions: &mount.VolumeOptions{NoCopy: true}},
			{Type: mount.TypeBind, Source: helperPath, Target: HelperMount, ReadOnly: true,
				BindOptions: &mount.BindOptions{Propagation: mount.PropagationRPrivate}},
			// In place of the engine's own file: see HostnameFile.
			{Type: mount.TypeBind, Source: filepath.Join(filepath.Dir(helperPath), HostnameFile), Target: "/etc/hostname",
				ReadOnly: true, BindOptions: &mount.BindOptions{Propagation: mount.PropagationRPrivate}},
		},
		Resources: container.Resources{
			Memory:     p.MemoryBytes,
			MemorySwap: p.MemoryBytes, // equal to Memory: no swap
			NanoCPUs:   p.NanoCPUs,
			PidsLimit:  &pids, // 0 means unlimited to the engine
		},
	}
	if p.Runtime != sandbox.RuntimeRunsc {
		// A cgroup namespace of its own: on cgroup v1 the engine's default
		// (the host's) shows each cgroup mount rooted at the container's
		// host cgroup path, /docker/<id> (F6). gVisor synthesises its own.
		hc.CgroupnsMode = container.CgroupnsModePrivate
	}
	if p.MemoryBytes == 0 {
		hc.MemorySwap = 0
	}
	if p.NoFile > 0 {
		hc.Ulimits = []*container.Ulimit{{Name: "nofile", Soft: p.NoFile, Hard: p.NoFile}}
	}
	return hc, nil
}

// chargeTmpfs raises a box's memory limit by what its tmpfs filesystems
// can hold (/tmp, and the workspace volume when it is a tmpfs of
// workspaceBytes): their pages are charged to the memory cgroup of the
// process that writes them, so under a limit of MemoryBytes alone filling
// the workspace ends in the OOM killer taking the box, not in ENOSPC at the
// cap (F5). With the charge added, the filesystems hit their size first
// and processes still get MemoryBytes. A box without a memory limit stays
// without one.
func chargeTmpfs(hc *container.HostConfig, p sandbox.Policy, workspaceBytes int64) {
	if hc.Memory <= 0 {
		return
	}
	hc.Memory += max(p.TmpfsBytes, 0) + max(workspaceBytes, 0)
	hc.MemorySwap = hc.Memory
}

// tmpfsVolumeBytes is the size of a tmpfs volume from its options, 0 for
// any other volume.
func tmpfsVolumeBytes(opts map[string]string) int64 {
	if opts["type"] != "tmpfs" {
		return 0
	}
	for _, o := range strings.Split(opts["o"], ",") {
		if v, ok := strings.CutPrefix(o, "size="); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err == nil {
				return n
			}
		}
	}
	return 0
}

// loadSeccomp reads a JSON seccomp profile; the engine wants its content.
func loadSeccomp(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read seccomp profile %s: %w", path, err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		return "", fmt.Errorf("seccomp profile %s is not JSON: %v: %w", path, err, sandbox.ErrInvalid)
	}
	if a, _ := v["defaultAction"].(string); a == "SCMP_ACT_ALLOW" {
		return "", fmt.Errorf("seccomp profile %s allows by default: %w", path, sandbox.ErrDenied)
	}
	c, _ := json.Marshal(v)
	return string(c), nil
}
