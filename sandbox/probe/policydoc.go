package probe

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mass-dev/mass/sandbox"
)

// Field is one policy field as `massctl sandbox policy` prints it.
type Field struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Doc   string `json:"doc"`
	Probe string `json:"probes"` // probes that check it
}

// DescribePolicy renders every policy field with what it means and which
// probes check it. SECURITY.md carries the same table in prose.
func DescribePolicy(p sandbox.Policy) []Field {
	mib := func(b int64) string {
		if b == 0 {
			return "0 (no cap)"
		}
		return fmt.Sprintf("%d MiB", b>>20)
	}
	return []Field{
		{"runtime", p.Runtime, "OCI runtime; runc by default, runsc (gVisor) adds a user-space kernel", "-"},
		{"user", p.User, "the agent's uid:gid inside the container; never 0, never " + strconv.Itoa(sandbox.MainUID) + " (the main processes')", "uid_nonroot, main_process_foreign"},
		{"cap_drop", strings.Join(p.CapDrop, ","), "capabilities dropped; ALL empties every set", "caps_zero"},
		{"cap_add", orDash(strings.Join(p.CapAdd, ",")), "capabilities added back; none by default", "caps_zero, unshare_*"},
		{"no_new_privileges", fmt.Sprint(p.NoNewPrivileges), "setuid binaries and file capabilities grant nothing", "no_new_privs"},
		{"seccomp", p.Seccomp, "system-call filter; mass: the engine's default profile without ptrace, process_vm_readv/writev and kcmp (unless CAP_SYS_PTRACE is added); default: the engine's own, which allows ptrace (a weakening); or a JSON profile path; never unconfined", "seccomp_filter, *_denied, ptrace_denied"},
		{"read_only_rootfs", fmt.Sprint(p.ReadOnlyRootfs), "image filesystem mounted read-only", "write_root, write_etc, write_usr"},
		{"tmpfs_bytes", mib(p.TmpfsBytes), "/tmp is a nosuid,nodev tmpfs of this size (counts toward memory)", "tmp_fill_cap"},
		{"network_mode", p.NetworkMode, "none: loopback only, no route, no DNS", "net_*, egress_*, dns_resolution, metadata_*, docker_gateway_*"},
		{"pids_limit", fmt.Sprint(p.PidsLimit), "tasks (processes and threads) the container may hold", "forkbomb_pids_limit"},
		{"memory_bytes", mib(p.MemoryBytes), "memory limit; swap limit set equal, so no swap", "memory_bomb_oom"},
		{"nano_cpus", fmt.Sprintf("%.2f CPU", float64(p.NanoCPUs)/1e9), "CPU quota (CFS)", "cpu_burn_capped"},
		{"nofile", fmt.Sprint(p.NoFile), "open-file ulimit", "-"},
		{"ipc_mode", p.IPCMode, "private System V IPC and /dev/shm", "ipc_private"},
		{"init", fmt.Sprint(p.Init), "an init process reaps zombies as pid 1", "-"},
		{"disk_bytes", mib(p.DiskBytes), "workspace volume cap", "workspace_fill_cap"},
		{"exec_timeout", p.ExecTimeout.Round(time.Second).String(), "one command's wall-clock limit; the whole process tree is killed", "-"},
		{"output_bytes", fmt.Sprintf("%d KiB", p.OutputBytes>>10), "cap per output stream per command", "-"},
		{"gpus", fmt.Sprint(p.GPUs), "NVIDIA devices (/dev/nvidia0..N-1 and the control nodes) and the driver libraries read-only; 0: none, and massd's sandbox.max_gpus caps it (SECURITY.md, GPUs)", "-"},
		{"egress", describeEgress(p.Egress), "opt-in per task: HTTP(S) to the listed domains through the episode's proxy, DNS answered by it, bytes capped, every request recorded; none by default", "proxy_*"},
	}
}

func describeEgress(e *sandbox.Egress) string {
	if e == nil {
		return "- (no network)"
	}
	return fmt.Sprintf("%s (cap %d MiB)", strings.Join(e.Allow, ","), e.MaxBytes>>20)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
