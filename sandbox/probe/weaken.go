package probe

import (
	"fmt"
	"io"
	"maps"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/mass-dev/mass/sandbox"
)

// Weakening is a deliberate hole in the policy, used to show that the probes
// can fail. Fails names exactly the probes that must then fail.
type Weakening struct {
	Name  string
	Doc   string
	Apply func(o *Options)
	Fails []string
	// Groups are the probe groups needed to see the failure.
	Groups []string
}

// MayFail are, per weakening, probes the hole lets fail on some runs but
// not all: a root agent with CAP_SYS_PTRACE may kill its box's main
// process during the static checks, and agent A is then gone for the IPC
// comparison that follows.
var MayFail = map[string][]string{"root-ptrace": {"ipc_private"}}

// runscWeakenings are what the weakenings do under runsc where that
// differs from runc: the probes that fail instead, or (moot) why the hole
// is not one there and nothing may fail.
var runscWeakenings = map[string]weakDiff{
	"network": {moot: "runsc is registered with --network=none: gVisor gives a bridge-mode box no network at all"},
	"cap-sys-admin": {fails: []string{"caps_zero"},
		moot: ""}, // unshare stays denied: the helper's fallback seccomp filter ignores capabilities
	"cap-net-raw":            {moot: "a non-root agent's exec gets no capability under gVisor, not even in its bounding set"},
	"seccomp-engine-default": {moot: "runsc exec runs without the container's profile; the helper's fallback filter denies ptrace whatever the profile"},
	// Root in a current gVisor box may write gVisor's own cgroupfs and
	// /proc/sysrq-trigger (the Sentry's, not the host's): the probes
	// that forbid it fail, as they should for a root agent.
	"root-ptrace": {fails: []string{"caps_zero", "cgroup_not_writable", "helper_not_traceable", "helper_requests_unreadable", "helper_startup_race",
		"main_process_foreign", "protected_not_writable", "setuid_workspace", "sysrq_trigger_write", "uid_nonroot"}},
	// The session gate still holds: the main processes keep their own uid.
	"root":             {fails: []string{"cgroup_not_writable", "protected_not_writable", "sysrq_trigger_write", "uid_nonroot"}},
	"writable-rootfs":  {moot: "gVisor refuses a non-root agent's writes to the image on permissions (EACCES) either way"},
	"new-privileges":   {moot: "the helper's fallback seccomp filter sets no_new_privs in every exec'd process"},
	"setuid-workspace": {moot: "the helper's fallback seccomp filter sets no_new_privs in every exec'd process"},
	"ipc-host":         {moot: "each runsc box is its own kernel: its IPC objects live in its Sentry, never the host's"},
	"engine-masks":     {moot: "gVisor's /proc and /sys are its own: no host command line, config or vmcoreinfo to mask"},
}

// Backends whose boxes the weakenings' expectations know.
const (
	BackendDocker     = "docker"
	BackendKubernetes = "kubernetes"
)

// kubernetesBaseline are the probes that fail on the kubernetes backend
// with the default policy, each for the reason given (SECURITY.md, "The
// kubernetes backend"); the runtime's own are added to them.
var kubernetesBaseline = map[string]string{
	"docker_gateway_tcp":         "needs the Docker engine's bridge gateway; a pod has none",
	"docker_gateway_udp":         "needs the Docker engine's bridge gateway; a pod has none",
	"other_agent_unsignalable":   "needs the other box's host pid, which the API does not give",
	"helper_not_traceable":       "looks for the Docker backend's long-lived serve helper; this backend runs one op exec per file operation",
	"helper_requests_unreadable": "looks for the Docker backend's long-lived serve helper; this backend runs one op exec per file operation",
	"main_process_foreign":       "an exec cannot choose its user: the box's main process (pause) runs as the agent's uid",
}

var kubernetesBaselineRunsc = map[string]string{
	"ipc_private": "under gVisor it compares the IPC namespaces of the boxes' sandboxes on the host, by their host pids, which the API does not give",
}

var kubernetesBaselineRunc = map[string]string{
	"kernel_info_masked":      "a pod has no field for masked paths: containerd masks its defaults only, and /proc/cmdline, /proc/config.gz and /sys/kernel/vmcoreinfo stay readable",
	"mountinfo_no_host_paths": "cgroup v1: containerd gives a runc pod no cgroup namespace, so the pod's cgroup path (/kubepods/…/pod<uid>/<id>) shows in mountinfo",
	"helper_startup_race": "the helper is in the image, mode 0755 (the same image serves gVisor, which can only run a readable binary): " +
		"a helper just exec'd is dumpable until its prctl, and the agent can open its /proc/PID/mem in that window",
}

// KubernetesBaseline are the probes that fail on the kubernetes backend's
// pods of the OCI runtime with the default policy, and why. A weakened run
// there must fail exactly these and the weakening's probes.
func KubernetesBaseline(runtime string) map[string]string {
	out := maps.Clone(kubernetesBaseline)
	switch runtime {
	case sandbox.RuntimeRunc:
		maps.Copy(out, kubernetesBaselineRunc)
	case sandbox.RuntimeRunsc:
		maps.Copy(out, kubernetesBaselineRunsc)
	}
	return out
}

// kubernetesWeakenings are what the weakenings do on the kubernetes
// backend, per OCI runtime, where that differs from the Docker backend on
// the same runtime.
var kubernetesWeakenings = map[string]map[string]weakDiff{
	sandbox.RuntimeRunc: {
		// The kubelet's Localhost profile is one file per node, resolved
		// for a box without capabilities (kubernetes.LocalhostSeccomp):
		// adding a capability to a pod does not open the rules the engine
		// opens for it, so unshare and ptrace stay denied.
		"cap-sys-admin": {fails: []string{"caps_zero"}},
		"root-ptrace": {fails: []string{"caps_zero", "helper_not_traceable", "helper_requests_unreadable", "helper_startup_race",
			"main_process_foreign", "protected_not_writable", "setuid_workspace", "uid_nonroot"}},
		// The workspace is a hostPath mount, which a pod cannot make
		// nosuid: with no_new_privs off a setuid file there takes effect.
		"new-privileges": {fails: []string{"no_new_privs", "setuid_workspace"}},
	},
	sandbox.RuntimeRunsc: {
		// helper_startup_race under runsc watches for a new file-helper
		// serve session while agent code runs; this backend starts none
		// (one op exec per file operation), so a root agent has nothing
		// to race there: the probe passes, and helper_not_traceable is
		// the one that fails for it.
		"root-ptrace": {fails: []string{"caps_zero", "cgroup_not_writable", "helper_not_traceable", "helper_requests_unreadable",
			"main_process_foreign", "protected_not_writable", "setuid_workspace", "sysrq_trigger_write", "uid_nonroot"}},
	},
}

// kubernetesMoot are the weakenings that are no hole on the kubernetes
// backend whatever the runtime: the pod has no field for them.
var kubernetesMoot = map[string]string{
	"network":       "a pod's network is its node's CNI's, not the policy's: mass-cni-noroute gives every pod loopback only",
	"ipc-host":      "the backend never sets hostIPC: every pod has its own IPC namespace",
	"no-pids-limit": "the pids cap is the node's kubelet podPidsLimit, not the policy's",
	"no-disk-cap":   "the workspace is a hostPath directory whose size the node does not cap, with or without the policy's cap",
}

type weakDiff struct {
	fails []string
	moot  string
}

// failsOn is w's expected failures on the backend and OCI runtime, and
// why it is moot there ("" when it is not).
func (w Weakening) failsOn(backend, runtime string) ([]string, string) {
	if backend == BackendKubernetes {
		if why, ok := kubernetesMoot[w.Name]; ok {
			return nil, why
		}
		if d, ok := kubernetesWeakenings[runtime][w.Name]; ok {
			return d.fails, d.moot
		}
	}
	if runtime == sandbox.RuntimeRunsc {
		if d, ok := runscWeakenings[w.Name]; ok {
			return d.fails, d.moot
		}
	}
	return w.Fails, ""
}

var netFails = []string{
	"net_loopback_only", "net_no_route", "egress_tcp_public", "egress_udp_public", "dns_resolution",
	"metadata_169_254_169_254", "metadata_100_100_100_200", "metadata_google_internal",
	"docker_gateway_tcp", "docker_gateway_udp", "gateway_listener_silent",
}

// Weakenings are the policy holes --weaken accepts.
var Weakenings = []Weakening{
	{"network", "NetworkMode bridge instead of none",
		func(o *Options) { o.Policy.NetworkMode = "bridge" }, netFails, []string{GroupStatic}},
	{"cap-sys-admin", "CapAdd SYS_ADMIN",
		func(o *Options) { o.Policy.CapAdd = append(o.Policy.CapAdd, "SYS_ADMIN") },
		[]string{"caps_zero", "unshare_user"}, []string{GroupStatic}},
	{"cap-net-raw", "CapAdd NET_RAW",
		func(o *Options) { o.Policy.CapAdd = append(o.Policy.CapAdd, "NET_RAW") },
		[]string{"caps_zero"}, []string{GroupStatic}},
	{"root-ptrace", "User 0:0 with CapAdd SYS_PTRACE",
		func(o *Options) { o.Policy.User, o.Policy.CapAdd = "0:0", append(o.Policy.CapAdd, "SYS_PTRACE") },
		[]string{"uid_nonroot", "caps_zero", "protected_not_writable", "setuid_workspace", "helper_not_traceable", "helper_requests_unreadable", "main_process_foreign", "ptrace_denied", "helper_startup_race"}, []string{GroupStatic}},
	{"seccomp-engine-default", "Seccomp default: the engine's built-in profile, which allows ptrace",
		func(o *Options) { o.Policy.Seccomp = sandbox.SeccompEngine }, []string{"ptrace_denied"}, []string{GroupStatic}},
	{"root", "User 0:0",
		func(o *Options) { o.Policy.User = "0:0" }, []string{"uid_nonroot", "protected_not_writable", "helper_startup_race"}, []string{GroupStatic}},
	{"writable-rootfs", "ReadOnlyRootfs false",
		func(o *Options) { o.Policy.ReadOnlyRootfs = false }, []string{"write_root", "write_etc", "write_usr"}, []string{GroupStatic}},
	{"new-privileges", "NoNewPrivileges false",
		func(o *Options) { o.Policy.NoNewPrivileges = false }, []string{"no_new_privs"}, []string{GroupStatic}},
	{"setuid-workspace", "NoNewPrivileges false and a disk workspace without nosuid",
		func(o *Options) { o.Policy.NoNewPrivileges, o.Policy.DiskBytes = false, 0 },
		[]string{"no_new_privs", "setuid_workspace"}, []string{GroupStatic}},
	{"env-secret", "an API key in the agent environment",
		func(o *Options) { o.Env = map[string]string{"OPENAI_API_KEY": "sk-probe0000000000000000"} },
		[]string{"env_no_secrets"}, []string{GroupStatic}},
	{"ipc-host", "IPCMode host",
		func(o *Options) { o.Policy.IPCMode = "host" }, []string{"ipc_private"}, []string{GroupStatic}},
	{"unprotected", "protected paths not mounted read-only",
		func(o *Options) { o.NoProtect = true }, []string{"protected_not_writable"}, []string{GroupStatic}},
	{"readable-helper", "the helper binary mounted mode 0755 (readable by the agent)",
		func(o *Options) { o.ReadableHelper = true }, []string{"helper_startup_race"}, []string{GroupStatic}},
	{"engine-masks", "the engine's default masked paths only (kernel command line and config readable)",
		func(o *Options) { o.EngineMasks = true }, []string{"kernel_info_masked"}, []string{GroupStatic}},
	{"no-pids-limit", "PidsLimit 0",
		func(o *Options) { o.Policy.PidsLimit = 0 }, []string{"forkbomb_pids_limit"}, []string{GroupResources}},
	{"no-memory-limit", "MemoryBytes 0",
		func(o *Options) { o.Policy.MemoryBytes = 0 }, []string{"memory_bomb_oom"}, []string{GroupResources}},
	{"no-tmpfs-cap", "TmpfsBytes 0",
		func(o *Options) { o.Policy.TmpfsBytes = 0 }, []string{"tmp_fill_cap"}, []string{GroupResources}},
	{"no-disk-cap", "DiskBytes 0",
		func(o *Options) { o.Policy.DiskBytes = 0 }, []string{"workspace_fill_cap"}, []string{GroupResources}},
	{"no-cpu-limit", "NanoCPUs 0",
		func(o *Options) { o.Policy.NanoCPUs = 0 }, []string{"cpu_burn_capped"}, []string{GroupResources}},
}

// LookupWeakening finds a weakening by name.
func LookupWeakening(name string) (Weakening, error) {
	for _, w := range Weakenings {
		if w.Name == name {
			return w, nil
		}
	}
	var names []string
	for _, w := range Weakenings {
		names = append(names, w.Name)
	}
	return Weakening{}, fmt.Errorf("unknown weakening %q (known: %s): %w", name, strings.Join(names, ", "), sandbox.ErrInvalid)
}

// Weaken applies the named weakenings to o (which must already carry its
// Reference and Policy, whose runtime picks the expectations) and returns
// the probes expected to fail on the Docker backend.
func Weaken(o *Options, names []string) ([]string, error) {
	return WeakenOn(BackendDocker, o, names)
}

// WeakenOn is Weaken for the boxes of backend.
func WeakenOn(backend string, o *Options, names []string) ([]string, error) {
	var fails []string
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		w, err := LookupWeakening(n)
		if err != nil {
			return nil, err
		}
		w.Apply(o)
		f, _ := w.failsOn(backend, o.Policy.Runtime)
		fails = append(fails, f...)
	}
	sort.Strings(fails)
	return fails, nil
}

// Moot lists, for the named weakenings, why each is no hole on the OCI
// runtime of the Docker backend (for the CLI to say so).
func Moot(runtime string, names []string) []string { return MootOn(BackendDocker, runtime, names) }

// MootOn is Moot for the boxes of backend.
func MootOn(backend, runtime string, names []string) []string {
	var out []string
	for _, n := range names {
		if w, err := LookupWeakening(strings.TrimSpace(n)); err == nil {
			if _, why := w.failsOn(backend, runtime); why != "" {
				out = append(out, w.Name+": "+why)
			}
		}
	}
	return out
}

// WriteTable prints one line per probe and a summary.
func WriteTable(w io.Writer, rep Report) error {
	fmt.Fprintf(w, "runtime: %s (%s)\n", rep.Runtime, rep.RuntimeVersion)
	if rep.RuntimeChoice != "" {
		fmt.Fprintf(w, "chosen:  %s\n", rep.RuntimeChoice)
	}
	fmt.Fprintf(w, "image:   %s (%s)\nengine:  %s\ngroups:  %s\n\n", rep.Image, rep.ImageID, rep.Engine, strings.Join(rep.Groups, ","))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PROBE\tOK\tEXPECTED\tOBSERVED")
	for _, p := range rep.Probes {
		okText := "ok"
		if !p.OK {
			okText = "FAIL"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p.Name, okText, oneLine(p.Expected), oneLine(p.Observed))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "%d passed, %d failed\n", rep.Passed, rep.Failed)
	if len(rep.NotProven) > 0 {
		fmt.Fprintln(w, "\nnot proven by this run:")
	}
	for _, n := range rep.NotProven {
		if _, err := fmt.Fprintf(w, "  - %s\n", n); err != nil {
			return err
		}
	}
	return nil
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
