package docker

import (
	"encoding/json"
	"reflect"
	"slices"
	"sort"
	"testing"

	"github.com/moby/profiles/seccomp"
)

// TestMassProfileDiff diffs the mass profile against the engine's default:
// the only change allowed is ptrace, process_vm_readv, process_vm_writev
// and kcmp leaving the rules not conditioned on CAP_SYS_PTRACE.
func TestMassProfileDiff(t *testing.T) {
	def, mass := seccomp.DefaultProfile(), massProfile()
	top := func(p *seccomp.Seccomp) seccomp.Seccomp { c := *p; c.Syscalls = nil; return c }
	if got, want := top(mass), top(def); !reflect.DeepEqual(got, want) {
		t.Errorf("top-level fields changed:\n%+v\nwant\n%+v", got, want)
	}
	var removed []string
	j := 0
	for i, d := range def.Syscalls {
		want := *d
		if !forPtraceCap(d) {
			want.Names = nil
			for _, n := range d.Names {
				if slices.Contains(ptraceSyscalls, n) {
					removed = append(removed, n)
				} else {
					want.Names = append(want.Names, n)
				}
			}
			if len(want.Names) == 0 {
				continue // the rule must be gone
			}
		}
		if j >= len(mass.Syscalls) {
			t.Fatalf("default rule %d (%v) missing from the mass profile", i, d.Names)
		}
		if got := *mass.Syscalls[j]; !reflect.DeepEqual(got, want) {
			t.Errorf("rule %d:\n%+v\nwant\n%+v", i, got, want)
		}
		j++
	}
	if j != len(mass.Syscalls) {
		t.Errorf("mass profile has %d rules, want %d", len(mass.Syscalls), j)
	}
	sort.Strings(removed)
	// kcmp is allowed only with CAP_SYS_PTRACE upstream; the other three
	// are allowed to everyone from kernel 4.8.
	if want := []string{"process_vm_readv", "process_vm_writev", "ptrace"}; !slices.Equal(removed, want) {
		t.Errorf("removed %v from the unconditioned rules, want exactly %v", removed, want)
	}
	// What the engine is sent: nothing of ptraceSyscalls outside the
	// CAP_SYS_PTRACE rule, all of them inside, and no deprecated "name".
	js, err := massProfileJSON()
	if err != nil {
		t.Fatal(err)
	}
	var sent struct {
		DefaultAction   string `json:"defaultAction"`
		DefaultErrnoRet *int   `json:"defaultErrnoRet"`
		Syscalls        []struct {
			Name     string          `json:"name"`
			Names    []string        `json:"names"`
			Includes *seccomp.Filter `json:"includes"`
		} `json:"syscalls"`
	}
	if err := json.Unmarshal([]byte(js), &sent); err != nil {
		t.Fatal(err)
	}
	capRules := 0
	for _, r := range sent.Syscalls {
		if r.Name != "" {
			t.Errorf("rule uses the deprecated name %q", r.Name)
		}
		forCap := r.Includes != nil && slices.Contains(r.Includes.Caps, "CAP_SYS_PTRACE")
		for _, n := range ptraceSyscalls {
			switch has := slices.Contains(r.Names, n); {
			case has && !forCap:
				t.Errorf("%s allowed without CAP_SYS_PTRACE by %+v", n, r)
			case !has && forCap:
				t.Errorf("%s missing from the CAP_SYS_PTRACE rule %v", n, r.Names)
			}
		}
		if forCap {
			capRules++
		}
	}
	if capRules != 1 {
		t.Errorf("%d CAP_SYS_PTRACE rules, want 1", capRules)
	}
	if sent.DefaultAction != "SCMP_ACT_ERRNO" || sent.DefaultErrnoRet == nil || *sent.DefaultErrnoRet != 1 {
		t.Errorf("default action %s errno %v, want SCMP_ACT_ERRNO with EPERM", sent.DefaultAction, sent.DefaultErrnoRet)
	}
}
