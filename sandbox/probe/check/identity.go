package check

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

func identityChecks() []named {
	return []named{
		one("uid_nonroot", checkUID),
		one("caps_zero", checkCaps),
		one("no_new_privs", checkNoNewPrivs),
		one("seccomp_filter", func(Config) Result { return statusField("Seccomp", "2", "Seccomp=2 (filter mode)") }),
	}
}

// procStatus parses /proc/self/status into a map.
func procStatus() (map[string]string, error) { return statusOf("self") }

// statusOf parses /proc/PID/status into a map.
func statusOf(pid string) (map[string]string, error) {
	b, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			m[k] = strings.TrimSpace(v)
		}
	}
	return m, nil
}

func checkUID(cfg Config) Result {
	want := fmt.Sprintf("uid=gid=%d, no supplementary group 0", cfg.UID)
	uid, euid, gid, egid := os.Getuid(), os.Geteuid(), os.Getgid(), os.Getegid()
	groups, _ := os.Getgroups()
	obs := fmt.Sprintf("uid=%d euid=%d gid=%d egid=%d groups=%v", uid, euid, gid, egid, groups)
	ok := uid != 0 && euid != 0 && gid != 0 && egid != 0 && uid == cfg.UID && euid == cfg.UID
	for _, g := range groups {
		if g == 0 {
			ok = false
		}
	}
	return verdict(ok, want, obs)
}

func checkCaps(Config) Result {
	st, err := procStatus()
	if err != nil {
		return fail("CapEff=CapPrm=CapBnd=CapInh=CapAmb=0", "read /proc/self/status: "+err.Error())
	}
	var parts []string
	ok := true
	for _, k := range []string{"CapEff", "CapPrm", "CapBnd", "CapInh", "CapAmb"} {
		v := st[k]
		if k == "CapAmb" && v == "" {
			// gVisor's status has no CapAmb line; ask the kernel.
			v = ambientCaps()
		}
		parts = append(parts, k+"="+v)
		if strings.Trim(v, "0") != "" || v == "" {
			ok = false
		}
	}
	return verdict(ok, "all capability sets empty", strings.Join(parts, " "))
}

// ambientCaps is the ambient set as prctl reports it, in status's hex form
// ("" when prctl fails).
func ambientCaps() string {
	var set uint64
	for c := 0; c <= unix.CAP_LAST_CAP; c++ {
		r, err := unix.PrctlRetInt(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_IS_SET, uintptr(c), 0, 0)
		if errors.Is(err, unix.EINVAL) && c == 0 {
			// No ambient set at all (gVisor's 2022 release): none can be raised.
			return "0000000000000000"
		}
		if err != nil {
			return ""
		}
		if r == 1 {
			set |= 1 << c
		}
	}
	return fmt.Sprintf("%016x", set)
}

// checkNoNewPrivs reads the flag from status, or from prctl where status
// lacks the line (gVisor).
func checkNoNewPrivs(Config) Result {
	st, err := procStatus()
	if err != nil {
		return fail("NoNewPrivs=1", "read /proc/self/status: "+err.Error())
	}
	if v, ok := st["NoNewPrivs"]; ok {
		return verdict(v == "1", "NoNewPrivs=1", "NoNewPrivs="+v)
	}
	r, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0)
	return verdict(err == nil && r == 1, "NoNewPrivs=1", fmt.Sprintf("prctl(PR_GET_NO_NEW_PRIVS)=%d %s", r, errName(err)))
}

func statusField(key, want, expected string) Result {
	st, err := procStatus()
	if err != nil {
		return fail(expected, "read /proc/self/status: "+err.Error())
	}
	got := st[key]
	return verdict(got == want, expected, key+"="+got)
}
