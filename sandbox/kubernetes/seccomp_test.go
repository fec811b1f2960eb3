package kubernetes

import (
	"encoding/json"
	"slices"
	"testing"
)

// TestLocalhostSeccomp: the kubelet profile is in the OCI form containerd
// reads (no engine-form conditions left for it to drop), and a box gets
// none of the rules the engine opens only to CAP_SYS_ADMIN or
// CAP_SYS_PTRACE: the profile written in the engine's form allowed
// unshare and ptrace to every runc pod.
func TestLocalhostSeccomp(t *testing.T) {
	s, err := LocalhostSeccomp()
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &raw); err != nil {
		t.Fatal(err)
	}
	for k := range raw {
		if !slices.Contains([]string{"defaultAction", "defaultErrnoRet", "architectures", "syscalls", "flags", "listenerPath", "listenerMetadata", "defaultErrno"}, k) {
			t.Errorf("profile key %q is not the OCI form's", k)
		}
	}
	var p struct {
		DefaultAction string `json:"defaultAction"`
		Syscalls      []map[string]json.RawMessage
	}
	if err := json.Unmarshal([]byte(s), &p); err != nil {
		t.Fatal(err)
	}
	if p.DefaultAction != "SCMP_ACT_ERRNO" {
		t.Errorf("default action %s, want SCMP_ACT_ERRNO", p.DefaultAction)
	}
	allowed := map[string]bool{}  // unconditionally
	withArgs := map[string]bool{} // only with argument filters
	for _, rule := range p.Syscalls {
		for k := range rule {
			if k == "includes" || k == "excludes" {
				t.Errorf("rule %s keeps the engine form's %q", rule["names"], k)
			}
		}
		var names []string
		var action string
		json.Unmarshal(rule["names"], &names)
		json.Unmarshal(rule["action"], &action)
		if action != "SCMP_ACT_ALLOW" {
			continue
		}
		for _, n := range names {
			if _, ok := rule["args"]; ok {
				withArgs[n] = true
			} else {
				allowed[n] = true
			}
		}
	}
	for _, n := range []string{"ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "unshare", "setns", "mount", "umount2",
		"bpf", "perf_event_open", "keyctl", "add_key", "init_module", "kexec_load", "syslog", "clone3"} {
		if allowed[n] || withArgs[n] {
			t.Errorf("%s allowed to a box without capabilities", n)
		}
	}
	if allowed["clone"] || !withArgs["clone"] {
		t.Errorf("clone: allowed %v, with argument filters %v; want only with the namespace flags masked", allowed["clone"], withArgs["clone"])
	}
	for _, n := range []string{"read", "write", "openat", "execve", "exit_group", "mmap", "futex"} {
		if !allowed[n] {
			t.Errorf("%s not allowed", n)
		}
	}
}
