package probe

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/mass-dev/mass/sandbox"
)

// inContainerProbes are the names every static run must report.
var wantStatic = []string{
	"uid_nonroot", "caps_zero", "no_new_privs", "seccomp_filter", "write_root", "write_etc", "write_usr",
	"proc_sys_write", "sysrq_trigger_write", "proc_kcore_read", "proc_keys_read", "kernel_info_masked", "cgroup_not_writable",
	"release_agent_not_writable", "no_docker_socket", "mountinfo_no_host_paths", "dev_nodes_standard",
	"protected_not_writable", "mount_denied", "umount_denied", "unshare_user", "unshare_mount", "unshare_net",
	"setns_denied", "keyctl_denied", "add_key_denied", "bpf_denied", "perf_event_open_denied",
	"userfaultfd_denied", "init_module_denied", "finit_module_denied", "kexec_load_denied",
	"settimeofday_denied", "syslog_denied", "raw_socket_denied", "packet_socket_denied", "mknod_denied", "ptrace_denied",
	"net_loopback_only", "net_no_route", "egress_tcp_public", "egress_udp_public", "dns_resolution",
	"metadata_169_254_169_254", "metadata_100_100_100_200", "metadata_google_internal",
	"docker_gateway_tcp", "docker_gateway_udp", "env_no_secrets", "other_agent_invisible",
	"other_agent_unsignalable", "setuid_workspace", "gateway_listener_silent", "helper_not_traceable", "helper_requests_unreadable",
	"main_process_foreign", "helper_startup_race", "helper_forgery_refused",
}

func names(rep Report) []string {
	var n []string
	for _, p := range rep.Probes {
		n = append(n, p.Name)
	}
	return n
}

func TestVerifyDefaultPolicyStaticAndResources(t *testing.T) {
	eachRuntime(t, verifyDefaultStaticAndResources)
}

// eachRuntime runs f on runc and, where registered, on runsc.
func eachRuntime(t *testing.T, f func(t *testing.T, runtime string)) {
	for _, runtime := range []string{sandbox.RuntimeRunc, sandbox.RuntimeRunsc} {
		t.Run(runtime, func(t *testing.T) {
			if runtime == sandbox.RuntimeRunsc && !testHasRunsc() {
				t.Skip("runsc is not registered with this engine: the gVisor run is SKIPPED")
			}
			f(t, runtime)
		})
	}
}

func verifyDefaultStaticAndResources(t *testing.T, runtime string) {
	ref := testReference()
	ref.Runtime = runtime
	rep := verify(t, Options{Reference: ref, Policy: ref, Groups: []string{GroupStatic, GroupResources}})
	var buf bytes.Buffer
	WriteTable(&buf, rep)
	t.Log("\n" + buf.String())
	if f := rep.Failing(); len(f) > 0 {
		t.Errorf("probes failed on the default policy: %v", f)
	}
	got := names(rep)
	for _, w := range append(wantStatic, "forkbomb_pids_limit", "host_responsive_during_forkbomb",
		"other_agent_responsive_during_forkbomb", "memory_bomb_oom", "tmp_fill_cap", "workspace_fill_cap", "cpu_burn_capped") {
		if !slices.Contains(got, w) {
			t.Errorf("probe %s missing from the report", w)
		}
	}
	js, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var shape struct {
		Probes []map[string]any `json:"probes"`
		Passed *int             `json:"passed"`
		Failed *int             `json:"failed"`
	}
	if err := json.Unmarshal(js, &shape); err != nil || shape.Passed == nil || shape.Failed == nil || len(shape.Probes) == 0 {
		t.Fatalf("report JSON %s lacks probes/passed/failed: %v", js, err)
	}
	for _, k := range []string{"name", "ok", "expected", "observed"} {
		if _, ok := shape.Probes[0][k]; !ok {
			t.Errorf("probe JSON lacks %q: %v", k, shape.Probes[0])
		}
	}
}

func TestVerifyHostSide(t *testing.T) {
	eachRuntime(t, verifyHostSide)
}

func verifyHostSide(t *testing.T, runtime string) {
	ref := testReference()
	ref.Runtime = runtime
	// The CLI default is DefaultRaceOps (10,000); the test keeps the race
	// short (exports are still one engine call each).
	ops := 200
	if testing.Short() {
		ops = 50
	}
	rep := verify(t, Options{Reference: ref, Policy: ref, Groups: []string{GroupHost}, RaceOps: ops})
	var buf bytes.Buffer
	WriteTable(&buf, rep)
	t.Log("\n" + buf.String())
	if f := rep.Failing(); len(f) > 0 {
		t.Errorf("host-side probes failed: %v", f)
	}
	want := []string{"host_symlink_file", "host_symlink_dir", "host_fifo", "host_sparse_file", "host_device_name", "host_export", "host_swap_race"}
	if got := names(rep); !slices.Equal(got, want) {
		t.Errorf("host probes = %v, want %v", got, want)
	}
}

// TestWeakenedPoliciesFailExactly runs the suite against each deliberate
// hole and checks that exactly the probes naming that hole fail.
func TestWeakenedPoliciesFailExactly(t *testing.T) {
	eachRuntime(t, weakenedFailExactly)
}

func weakenedFailExactly(t *testing.T, runtime string) {
	for _, w := range Weakenings {
		if testing.Short() && slices.Contains(w.Groups, GroupResources) {
			continue
		}
		t.Run(w.Name, func(t *testing.T) {
			ref := testReference()
			ref.Runtime = runtime
			o := Options{Reference: ref, Policy: ref, Groups: w.Groups}
			wantFail, err := Weaken(&o, []string{w.Name})
			if err != nil {
				t.Fatal(err)
			}
			rep := verify(t, o)
			got := slices.DeleteFunc(rep.Failing(), func(n string) bool { return slices.Contains(MayFail[w.Name], n) })
			sort.Strings(got)
			if !slices.Equal(got, wantFail) {
				var buf bytes.Buffer
				WriteTable(&buf, rep)
				t.Errorf("weakening %s: failing probes = %v, want exactly %v\n%s", w.Name, got, wantFail, buf.String())
			}
		})
	}
}

func TestWeakenUnknown(t *testing.T) {
	o := Options{}
	_, err := Weaken(&o, []string{"network", "no-such-hole"})
	if err == nil || !strings.Contains(err.Error(), "no-such-hole") {
		t.Errorf("Weaken with an unknown name: err = %v, want it to name the hole", err)
	}
}
