package sandbox

import (
	"context"
	"time"
)

// MainUID is the uid and gid of an agent container's main processes (the
// engine's init and the helper's "pause"), fixed and never the agent's:
// an agent without CAP_KILL and CAP_SYS_PTRACE can then neither signal nor
// trace them, so it cannot hide code in a process that massd's kills spare.
const MainUID = 65532

// MainUser is MainUID as the container's "uid:gid" user.
const MainUser = "65532:65532"

// ContainerUser is the user of an agent container's main processes:
// MainUser, except for a root agent that holds capabilities, a weakening.
// The engine grants an exec'd process permitted and effective capabilities
// only when the container's own user is root (no_new_privileges then keeps
// an exec'd root from gaining them on execve), so such an agent needs a root
// main process, which it can then signal and, given CAP_SYS_PTRACE, trace.
func (p Policy) ContainerUser() string {
	if uid, _, err := ParseUser(p.User); err == nil && uid == 0 && (len(p.CapAdd) > 0 || !hasAll(p.CapDrop)) {
		return p.User
	}
	return MainUser
}

// OCI runtimes a Policy names.
const (
	// RuntimeAuto resolves, when the runtime opens, to RuntimeRunsc if the
	// engine has it registered, else to RuntimeRunc (with a warning in the
	// policy report). RuntimeEnv, when set, pins what it resolves to.
	RuntimeAuto  = "auto"
	RuntimeRunc  = "runc"
	RuntimeRunsc = "runsc"
	// RuntimeEnv names the environment variable that pins what RuntimeAuto
	// resolves to ("runc" or "runsc"); the test binaries outside the
	// sandbox suite set it to runc so that CI stays fast.
	RuntimeEnv = "MASS_SANDBOX_RUNTIME"
)

// EffectiveRuntime is the OCI runtime boxes of policy p run on under rt:
// p's own, or for RuntimeAuto (and a zero p) what rt resolved it to; ""
// when rt cannot say.
func EffectiveRuntime(ctx context.Context, rt Runtime, p Policy) string {
	if p.Runtime != "" && p.Runtime != RuntimeAuto {
		return p.Runtime
	}
	if rt == nil {
		return ""
	}
	rep, err := rt.Report(ctx)
	if err != nil {
		return ""
	}
	return rep.Policy.Runtime
}

// The named seccomp profiles; any other Policy.Seccomp value is the path of
// a JSON profile.
const (
	// SeccompMass is the engine's default profile without ptrace,
	// process_vm_readv, process_vm_writev and kcmp unless the container holds
	// CAP_SYS_PTRACE, so an agent cannot trace its file helper before the
	// helper makes itself non-dumpable.
	SeccompMass = "mass"
	// SeccompEngine is the engine's built-in default profile, which allows
	// ptrace on kernels from 4.8: a weakening.
	SeccompEngine = "default"
)

// Policy is the hardening applied to every agent container. Each field is
// documented in SECURITY.md and printed by `massctl sandbox policy`.
type Policy struct {
	Runtime         string        `json:"runtime" yaml:"runtime"`   // OCI runtime: RuntimeAuto (default), "runc" or "runsc" (gVisor)
	User            string        `json:"user" yaml:"user"`         // uid:gid, never 0
	CapDrop         []string      `json:"cap_drop" yaml:"cap_drop"` // always ["ALL"]
	CapAdd          []string      `json:"cap_add" yaml:"cap_add"`   // empty in the default policy
	NoNewPrivileges bool          `json:"no_new_privileges" yaml:"no_new_privileges"`
	Seccomp         string        `json:"seccomp" yaml:"seccomp"` // SeccompMass (default), SeccompEngine or a JSON profile path; never "unconfined"
	ReadOnlyRootfs  bool          `json:"read_only_rootfs" yaml:"read_only_rootfs"`
	TmpfsBytes      int64         `json:"tmpfs_bytes" yaml:"tmpfs_bytes"`   // size of /tmp (nosuid,nodev)
	NetworkMode     string        `json:"network_mode" yaml:"network_mode"` // "none"
	PidsLimit       int64         `json:"pids_limit" yaml:"pids_limit"`
	MemoryBytes     int64         `json:"memory_bytes" yaml:"memory_bytes"` // MemorySwap is set equal: no swap
	NanoCPUs        int64         `json:"nano_cpus" yaml:"nano_cpus"`
	NoFile          int64         `json:"nofile" yaml:"nofile"`
	IPCMode         string        `json:"ipc_mode" yaml:"ipc_mode"` // "private"
	Init            bool          `json:"init" yaml:"init"`
	DiskBytes       int64         `json:"disk_bytes" yaml:"disk_bytes"` // workspace cap
	ExecTimeout     time.Duration `json:"exec_timeout" yaml:"exec_timeout"`
	OutputBytes     int           `json:"output_bytes" yaml:"output_bytes"` // cap per stream per exec
	// GPUs is how many NVIDIA devices the box gets (/dev/nvidia0..GPUs-1,
	// the control nodes and the driver libraries, read-only); 0: none. The
	// runtime refuses more than its configured cap (see SECURITY.md).
	GPUs int `json:"gpus,omitempty" yaml:"gpus,omitempty"`
	// Egress, when set, attaches the box to its episode's egress proxy
	// instead of no network (NetworkMode stays "none"); see Egress.
	Egress *Egress `json:"egress,omitempty" yaml:"egress,omitempty"`
}

// MaxGPUs bounds Policy.GPUs.
const MaxGPUs = 64

// DefaultPolicy returns the production policy.
func DefaultPolicy() Policy {
	return Policy{
		Runtime:         RuntimeAuto,
		User:            "65534:65534",
		CapDrop:         []string{"ALL"},
		NoNewPrivileges: true,
		Seccomp:         SeccompMass,
		ReadOnlyRootfs:  true,
		TmpfsBytes:      256 << 20,
		NetworkMode:     "none",
		PidsLimit:       256,
		MemoryBytes:     2 << 30,
		NanoCPUs:        1_000_000_000,
		NoFile:          1024,
		IPCMode:         "private",
		Init:            true,
		DiskBytes:       2 << 30,
		ExecTimeout:     10 * time.Minute,
		OutputBytes:     1 << 20,
	}
}

// Report is the effective policy together with the engine facts it depends on.
type Report struct {
	Policy        Policy   `json:"policy"`
	Engine        string   `json:"engine"` // e.g. "docker 20.10.24 (API 1.41)"
	RuncVersion   string   `json:"runc_version"`
	KernelVersion string   `json:"kernel_version"`
	Runtimes      []string `json:"runtimes"` // OCI runtimes the engine has registered
	// RuntimeChoice says how the policy's runtime was chosen (auto, pinned
	// by RuntimeEnv, or named).
	RuntimeChoice string `json:"runtime_choice"`
	// RuntimeVersion, RuntimePath and RuntimeArgs describe the OCI runtime
	// the policy resolved to, as the engine has it registered.
	RuntimeVersion  string   `json:"runtime_version"`
	RuntimePath     string   `json:"runtime_path"`
	RuntimeArgs     []string `json:"runtime_args,omitempty"`
	GVisor          bool     `json:"gvisor"`   // runsc available
	DiskCapEnforced string   `json:"disk_cap"` // how the workspace cap is enforced
	Warnings        []string `json:"warnings"`
}
