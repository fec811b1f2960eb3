package docker

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/mass-dev/mass/sandbox"
)

// Report gathers engine, runc and kernel versions and the registered OCI
// runtimes, and warns about versions that predate upstream CVE fixes.
func (r *Runtime) Report(ctx context.Context) (sandbox.Report, error) {
	v, err := r.cli.ServerVersion(ctx)
	if err != nil {
		return sandbox.Report{}, wrapErr("docker version", err)
	}
	info, err := r.cli.Info(ctx)
	if err != nil {
		return sandbox.Report{}, wrapErr("docker info", err)
	}
	rep := sandbox.Report{
		Policy:          r.cfg.Policy,
		Engine:          fmt.Sprintf("docker %s (API %s, client negotiated %s)", v.Version, v.APIVersion, r.cli.ClientVersion()),
		KernelVersion:   v.KernelVersion,
		DiskCapEnforced: diskCapDescription(r.cfg.DiskMode, r.cfg.Policy, r.cfg.MonitorInterval),
	}
	for _, c := range v.Components {
		if strings.EqualFold(c.Name, "runc") {
			rep.RuncVersion = c.Version
		}
	}
	if rep.RuncVersion == "" {
		rep.RuncVersion = info.RuncCommit.ID
	}
	for name := range info.Runtimes {
		rep.Runtimes = append(rep.Runtimes, name)
		if name == "runsc" {
			rep.GVisor = true
		}
	}
	sort.Strings(rep.Runtimes)
	rep.RuntimeChoice = r.runtimeChoice
	if rt, ok := info.Runtimes[rep.Policy.Runtime]; ok {
		rep.RuntimePath, rep.RuntimeArgs = rt.Path, rt.Args
		if rep.RuntimePath == "" {
			rep.RuntimePath = rep.Policy.Runtime
		}
	}
	rep.RuntimeVersion = runtimeVersion(ctx, rep.Policy.Runtime, rep.RuntimePath, rep.RuncVersion)
	rep.Warnings = versionWarnings(rep.RuncVersion)
	if r.runtimeNote != "" {
		rep.Warnings = append(rep.Warnings, r.runtimeNote)
	}
	seccomp := false
	for _, o := range info.SecurityOptions {
		if strings.Contains(o, "seccomp") {
			seccomp = true
		}
	}
	if !seccomp {
		rep.Warnings = append(rep.Warnings, "the engine reports no seccomp support; the default profile cannot apply")
	}
	for _, w := range r.cfg.Policy.Weaknesses() {
		rep.Warnings = append(rep.Warnings, "policy weaker than default: "+w)
	}
	rep.Warnings = append(rep.Warnings, r.cfg.Egress.weaknesses()...)
	rep.Warnings = append(rep.Warnings, mountinfoResiduals(rep.Policy.Runtime, r.helperBin)...)
	return rep, nil
}

// mountinfoResiduals names the host paths a runc box's /proc/self/mountinfo
// still shows (F6; the probe mountinfo_no_host_paths allows exactly these).
// Under runsc every mount is rooted at "/".
func mountinfoResiduals(runtime, helperBin string) []string {
	if runtime == sandbox.RuntimeRunsc {
		return nil
	}
	w := []string{"known residual (runc): mountinfo shows the engine's init at its host path (the docker-init bind, e.g. /usr/bin/tini-static) " +
		"and, in egress boxes only, the engine's hosts and resolv.conf as <data-root>/containers/<id>/{hosts,resolv.conf}"}
	if filepath.Dir(helperBin) != sandbox.HelperHostDir {
		w = append(w, "the daemon is not root: its helper copy's host path "+helperBin+" shows in every box's mountinfo (probe mountinfo_no_host_paths fails)")
	}
	return w
}

// versionWarnings flags runc releases older than the upstream fixes for
// CVE-2019-5736 (1.0.0-rc7) and CVE-2024-21626 (1.1.12). Distributions
// backport fixes, so these are warnings.
func versionWarnings(runc string) []string {
	if runc == "" {
		return []string{"runc version unknown; cannot check CVE-2019-5736 / CVE-2024-21626"}
	}
	var w []string
	if compareVersions(runc, "1.0.0-rc7") < 0 {
		w = append(w, fmt.Sprintf("runc %s predates the upstream fix for CVE-2019-5736 (1.0.0-rc7); check that your distribution backported it", runc))
	}
	if compareVersions(runc, "1.1.12") < 0 && !backported(runc, cve202421626Backports) {
		w = append(w, fmt.Sprintf("runc %s predates the upstream fix for CVE-2024-21626 (1.1.12); check that your distribution backported it", runc))
	}
	return w
}

// backport is a distribution's runc package line that carries an upstream
// fix from a given package revision on.
type backport struct {
	prefix string // the package version up to the revision counter
	from   int    // the first revision with the fix
}

// cve202421626Backports are the distribution packages known to carry the
// CVE-2024-21626 fix although their upstream base predates 1.1.12: Debian
// 12 fixed it in 1.1.5+ds1-1+deb12u1 (DSA-5615-1).
var cve202421626Backports = []backport{{prefix: "1.1.5+ds1-1+deb12u", from: 1}}

// backported reports whether the runc package version is one of the known
// backports at or past its fixed revision.
func backported(runc string, known []backport) bool {
	for _, b := range known {
		rest, ok := strings.CutPrefix(strings.TrimSpace(runc), b.prefix)
		if !ok {
			continue
		}
		if n, err := strconv.Atoi(rest); err == nil && n >= b.from {
			return true
		}
	}
	return false
}

// compareVersions compares "1.1.5+ds1", "1.0.0-rc6", "v1.2.3" style versions:
// numeric parts first, then a release sorts after any pre-release (rcN).
func compareVersions(a, b string) int {
	pa, ra := parseVersion(a)
	pb, rb := parseVersion(b)
	for i := 0; i < 3; i++ {
		if pa[i] != pb[i] {
			if pa[i] < pb[i] {
				return -1
			}
			return 1
		}
	}
	switch {
	case ra == rb:
		return 0
	case ra < rb:
		return -1
	}
	return 1
}

// parseVersion returns the three numeric parts and a pre-release rank:
// rcN ranks N, a release ranks 1<<30.
func parseVersion(s string) ([3]int, int) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "v")
	if i := strings.IndexAny(s, "+~ "); i >= 0 {
		s = s[:i]
	}
	rank := 1 << 30
	if i := strings.IndexByte(s, '-'); i >= 0 {
		pre := s[i+1:]
		s = s[:i]
		rank = 0
		if n, err := strconv.Atoi(strings.TrimLeft(pre, "abcdefghijklmnopqrstuvwxyz.")); err == nil {
			rank = n
		}
	}
	var out [3]int
	for i, part := range strings.SplitN(s, ".", 3) {
		n, _ := strconv.Atoi(part)
		out[i] = n
	}
	return out, rank
}
