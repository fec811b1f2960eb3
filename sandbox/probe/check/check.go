// Package check holds the isolation checks that mass-probe runs inside an
// agent container. Each check tries something a contained agent must not be
// able to do and reports what it expected and what it observed.
package check

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"syscall"
)

// Result is the outcome of one probe.
type Result struct {
	Name     string `json:"name"`
	OK       bool   `json:"ok"`
	Expected string `json:"expected"`
	Observed string `json:"observed"`
}

// Config tells the checks what the policy promises. The runner fills it from
// the reference policy, never from what the container reports.
type Config struct {
	UID          int      `json:"uid"`            // expected uid (non-zero)
	Workspace    string   `json:"workspace"`      // /workspace
	Helper       string   `json:"helper"`         // mount point of the helper binary
	Protected    []string `json:"protected"`      // absolute paths that must be read-only
	Gateway      string   `json:"gateway"`        // Docker bridge gateway address, if any
	GatewayTCP   int      `json:"gateway_tcp"`    // port of the runner's listener on the gateway
	GatewayUDP   int      `json:"gateway_udp"`    // port of the runner's UDP listener on the gateway
	Marker       string   `json:"marker"`         // hex sha256 of an argv element of the other agent's process
	OtherHostPID int      `json:"other_host_pid"` // host pid of the other agent's init, 0 if unknown
	PidsLimit    int64    `json:"pids_limit"`
	MemoryBytes  int64    `json:"memory_bytes"`
	TmpfsBytes   int64    `json:"tmpfs_bytes"`
	DiskBytes    int64    `json:"disk_bytes"`
	NanoCPUs     int64    `json:"nano_cpus"`
	Only         []string `json:"only,omitempty"` // run only these static checks
	// Runtime is the OCI runtime of the box ("runc" or "runsc"): where
	// gVisor legitimately differs a check states its runsc expectation.
	Runtime string `json:"runtime,omitempty"`
}

// GVisor reports whether the checks run under runsc.
func (c Config) GVisor() bool { return c.Runtime == "runsc" }

// Static runs every quick check (no resource exhaustion) in a fixed order.
func Static(cfg Config) []Result {
	var out []Result
	only := map[string]bool{}
	for _, n := range cfg.Only {
		only[n] = true
	}
	for _, c := range staticChecks() {
		if len(only) > 0 && !only[c.name] {
			continue
		}
		out = append(out, c.run(cfg)...)
	}
	return out
}

type named struct {
	name string
	run  func(Config) []Result
}

func one(name string, f func(Config) Result) named {
	return named{name, func(c Config) []Result {
		r := f(c)
		r.Name = name
		return []Result{r}
	}}
}

func staticChecks() []named {
	var cs []named
	cs = append(cs, identityChecks()...)
	cs = append(cs, fsChecks()...)
	cs = append(cs, syscallChecks()...)
	cs = append(cs, netChecks()...)
	cs = append(cs, envChecks()...)
	cs = append(cs, helperChecks()...)
	return cs
}

// StaticNames lists the static checks in run order.
func StaticNames() []string {
	var n []string
	for _, c := range staticChecks() {
		n = append(n, c.name)
	}
	return n
}

// pass and fail build results; names are filled in by one().
func pass(expected, observed string) Result {
	return Result{OK: true, Expected: expected, Observed: observed}
}

func fail(expected, observed string) Result {
	return Result{OK: false, Expected: expected, Observed: observed}
}

func verdict(ok bool, expected, observed string) Result {
	return Result{OK: ok, Expected: expected, Observed: observed}
}

// errName renders an errno as its symbolic name (EPERM), other errors as text.
func errName(err error) string {
	if err == nil {
		return "success"
	}
	var en syscall.Errno
	if errors.As(err, &en) {
		if n := errnoNames[en]; n != "" {
			return n
		}
		return fmt.Sprintf("errno %d", int(en))
	}
	return err.Error()
}

var errnoNames = map[syscall.Errno]string{
	syscall.EPERM: "EPERM", syscall.ENOENT: "ENOENT", syscall.ESRCH: "ESRCH", syscall.EACCES: "EACCES",
	syscall.EROFS: "EROFS", syscall.EINVAL: "EINVAL", syscall.ENOSYS: "ENOSYS", syscall.EAGAIN: "EAGAIN",
	syscall.ENOSPC: "ENOSPC", syscall.EDQUOT: "EDQUOT", syscall.ENETUNREACH: "ENETUNREACH",
	syscall.EHOSTUNREACH: "EHOSTUNREACH", syscall.ECONNREFUSED: "ECONNREFUSED", syscall.EAFNOSUPPORT: "EAFNOSUPPORT",
	syscall.EEXIST: "EEXIST", syscall.EBUSY: "EBUSY", syscall.ENOTDIR: "ENOTDIR", syscall.EISDIR: "EISDIR",
	syscall.EBADF: "EBADF", syscall.EFAULT: "EFAULT", syscall.ENOMEM: "ENOMEM", syscall.EOPNOTSUPP: "EOPNOTSUPP",
	syscall.EPROTONOSUPPORT: "EPROTONOSUPPORT", syscall.ETIMEDOUT: "ETIMEDOUT", syscall.ENXIO: "ENXIO",
	syscall.ENODEV: "ENODEV", syscall.EMFILE: "EMFILE",
}

// denied reports whether err is a refusal (rather than success).
func denied(err error) bool { return err != nil }

// WriteJSON writes results as one JSON array.
func WriteJSON(w io.Writer, rs []Result) error {
	return json.NewEncoder(w).Encode(rs)
}

// MaxOutput bounds what the runner accepts from a probe process.
const MaxOutput = 1 << 20

// ParseResults decodes a probe's output. The output comes from inside a
// container, so it is size-capped and every field is checked.
func ParseResults(data []byte) ([]Result, error) {
	if len(data) > MaxOutput {
		return nil, fmt.Errorf("probe output is %d bytes, over the %d byte cap", len(data), MaxOutput)
	}
	var rs []Result
	if err := json.Unmarshal(data, &rs); err != nil {
		return nil, fmt.Errorf("decode probe output: %w", err)
	}
	seen := map[string]bool{}
	for i, r := range rs {
		if r.Name == "" || len(r.Name) > 64 || strings.ContainsAny(r.Name, " \t\n\"") {
			return nil, fmt.Errorf("probe result %d: bad name %q", i, r.Name)
		}
		if seen[r.Name] {
			return nil, fmt.Errorf("probe result %d: duplicate name %q", i, r.Name)
		}
		seen[r.Name] = true
	}
	return rs, nil
}

// short clips long observations.
func short(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func joinSorted(xs []string) string {
	sort.Strings(xs)
	return strings.Join(xs, ",")
}
