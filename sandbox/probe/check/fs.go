package check

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
)

func fsChecks() []named {
	return []named{
		one("write_root", func(c Config) Result { return writeFails(c, "/") }),
		one("write_etc", func(c Config) Result { return writeFails(c, "/etc") }),
		one("write_usr", func(c Config) Result { return writeFails(c, "/usr") }),
		one("proc_sys_write", func(Config) Result {
			return openWriteDenied("/proc/sys/kernel/hostname", "/proc/sys/kernel/core_pattern", "/proc/sys/vm/drop_caches")
		}),
		one("sysrq_trigger_write", func(Config) Result { return openWriteDenied("/proc/sysrq-trigger") }),
		one("proc_kcore_read", func(Config) Result { return unreadable("/proc/kcore") }),
		one("proc_keys_read", func(Config) Result { return unreadable("/proc/keys") }),
		one("kernel_info_masked", checkKernelInfo),
		one("cgroup_not_writable", checkCgroupFiles),
		one("release_agent_not_writable", checkReleaseAgent),
		one("no_docker_socket", checkDockerSocket),
		one("mountinfo_no_host_paths", checkMountinfo),
		one("dev_nodes_standard", checkDevNodes),
		one("protected_not_writable", checkProtected),
	}
}

// writeFails creates a file in dir and expects EROFS: the root filesystem
// must be mounted read-only, not merely unwritable for this uid.
// writeFails wants EROFS; gVisor checks permissions before the read-only
// flag, so under runsc EACCES (the write still fails) is its answer too.
func writeFails(cfg Config, dir string) Result {
	want := "EROFS (read-only root filesystem)"
	good := func(err error) bool { return errors.Is(err, syscall.EROFS) }
	if cfg.GVisor() {
		want = "runsc: EROFS or EACCES (gVisor checks permissions before the read-only flag)"
		good = func(err error) bool { return errors.Is(err, syscall.EROFS) || errors.Is(err, syscall.EACCES) }
	}
	if _, err := os.Lstat(dir); err != nil {
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			os.Remove(dir)
			return fail(want, "created "+dir)
		}
		return verdict(good(err), want, "mkdir "+dir+": "+errName(err))
	}
	p := filepath.Join(dir, ".mass-probe-write")
	f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err == nil {
		f.Close()
		os.Remove(p)
		return fail(want, "created "+p)
	}
	return verdict(good(err), want, "create "+p+": "+errName(err))
}

// gVisorCmdline is the fixed text gVisor's /proc/cmdline shows in place of
// the host's: "BOOT_IMAGE=/vmlinuz-4.4.0-gvisor quiet" in 2022 releases,
// 4.19.0 in current ones (the version gVisor claims, not the host's).
var gVisorCmdline = regexp.MustCompile(`^BOOT_IMAGE=/vmlinuz-[0-9]+\.[0-9]+\.[0-9]+-gvisor quiet$`)

// checkKernelInfo wants the host kernel's command line, configuration and
// crash-dump layout hidden; under runsc /proc/cmdline may be gVisor's own
// synthetic line, which tells nothing about the host.
func checkKernelInfo(cfg Config) Result {
	r := allUnreadable("/proc/cmdline", "/proc/config.gz", "/sys/kernel/vmcoreinfo")
	if r.OK || !cfg.GVisor() {
		return r
	}
	b, _ := readSmall("/proc/cmdline", 4096)
	rest := allUnreadable("/proc/config.gz", "/sys/kernel/vmcoreinfo")
	ok := gVisorCmdline.MatchString(strings.TrimSpace(b)) && rest.OK
	return verdict(ok, "absent, unreadable or masked; runsc: /proc/cmdline is gVisor's synthetic line",
		fmt.Sprintf("/proc/cmdline: %q; %s", short(b, 80), rest.Observed))
}

func openWriteDenied(paths ...string) Result {
	var obs []string
	ok := true
	for _, p := range paths {
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err == nil {
			f.Close()
			ok = false
			obs = append(obs, p+": opened for writing")
			continue
		}
		obs = append(obs, p+": "+errName(err))
	}
	return verdict(ok, "open for writing fails", strings.Join(obs, "; "))
}

// allUnreadable passes when every path is absent, unreadable or masked.
func allUnreadable(ps ...string) Result {
	var obs []string
	ok := true
	for _, p := range ps {
		r := unreadable(p)
		ok = ok && r.OK
		obs = append(obs, p+": "+r.Observed)
	}
	return verdict(ok, "absent, unreadable or masked", strings.Join(obs, "; "))
}

// unreadable passes when the file is absent, unreadable, or masked (empty).
func unreadable(p string) Result {
	f, err := os.Open(p)
	if err != nil {
		return pass("absent, unreadable or masked", "open: "+errName(err))
	}
	defer f.Close()
	buf := make([]byte, 4096)
	n, err := f.Read(buf)
	if n == 0 {
		return pass("absent, unreadable or masked", fmt.Sprintf("read 0 bytes (%s)", errName(err)))
	}
	return fail("absent, unreadable or masked", fmt.Sprintf("read %d bytes", n))
}

// cgroupFileNames are the control files whose writing would change limits.
var cgroupFileNames = map[string]bool{
	"cgroup.procs": true, "tasks": true, "notify_on_release": true, "cgroup.subtree_control": true,
	"pids.max": true, "memory.max": true, "memory.limit_in_bytes": true, "memory.memsw.limit_in_bytes": true,
	"memory.swap.max": true, "cpu.max": true, "cpu.cfs_quota_us": true, "cpuset.cpus": true, "devices.allow": true,
}

func checkCgroupFiles(Config) Result {
	var tried, opened []string
	filepath.WalkDir("/sys/fs/cgroup", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && strings.Count(p, "/") > 5 {
			return filepath.SkipDir
		}
		if !cgroupFileNames[d.Name()] {
			return nil
		}
		tried = append(tried, p)
		if f, err := os.OpenFile(p, os.O_WRONLY, 0); err == nil {
			f.Close()
			opened = append(opened, p)
		}
		return nil
	})
	if len(opened) > 0 {
		return fail("no cgroup control file writable", "writable: "+short(strings.Join(opened, ","), 300))
	}
	return pass("no cgroup control file writable", fmt.Sprintf("%d control files, none writable", len(tried)))
}

func checkReleaseAgent(Config) Result {
	cands, _ := filepath.Glob("/sys/fs/cgroup/*/release_agent")
	cands = append(cands, "/sys/fs/cgroup/release_agent")
	var obs []string
	for _, p := range cands {
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err == nil {
			f.Close()
			return fail("release_agent absent or not writable", p+" opened for writing")
		}
		if !errors.Is(err, fs.ErrNotExist) {
			obs = append(obs, p+": "+errName(err))
		}
	}
	if len(obs) == 0 {
		return pass("release_agent absent or not writable", "no release_agent visible")
	}
	return pass("release_agent absent or not writable", strings.Join(obs, "; "))
}

var socketPaths = []string{
	"/var/run/docker.sock", "/run/docker.sock", "/run/containerd/containerd.sock",
	"/var/run/containerd/containerd.sock", "/run/docker/containerd/containerd.sock",
	"/run/crio/crio.sock", "/run/podman/podman.sock",
}

func checkDockerSocket(Config) Result {
	var found []string
	for _, p := range socketPaths {
		if _, err := os.Lstat(p); err == nil {
			found = append(found, p)
		}
	}
	if mi, err := os.ReadFile("/proc/self/mountinfo"); err == nil {
		for _, l := range strings.Split(string(mi), "\n") {
			if strings.Contains(l, "docker.sock") || strings.Contains(l, "containerd.sock") {
				found = append(found, "mount: "+short(l, 120))
			}
		}
	}
	for _, k := range []string{"DOCKER_HOST", "CONTAINERD_ADDRESS", "DOCKER_CERT_PATH"} {
		if v, ok := os.LookupEnv(k); ok {
			found = append(found, k+"="+short(v, 40))
		}
	}
	if len(found) > 0 {
		return fail("no engine socket, no DOCKER_HOST", strings.Join(found, "; "))
	}
	return pass("no engine socket, no DOCKER_HOST", fmt.Sprintf("none of %d socket paths; no DOCKER_HOST", len(socketPaths)))
}

// standardDev are the nodes Docker creates in a container's /dev.
var standardDev = map[string]bool{
	"/dev/null": true, "/dev/zero": true, "/dev/full": true, "/dev/random": true, "/dev/urandom": true,
	"/dev/tty": true, "/dev/console": true, "/dev/ptmx": true, "/dev/pts/ptmx": true,
}

// gVisorDev are device nodes gVisor's own /dev adds: its FUSE and TUN
// devices are implemented by the sentry, not the host kernel's drivers.
var gVisorDev = map[string]bool{"/dev/fuse": true, "/dev/net/tun": true}

func checkDevNodes(cfg Config) Result {
	var odd []string
	n := 0
	filepath.WalkDir("/dev", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.Type()&(fs.ModeDevice|fs.ModeCharDevice) == 0 {
			return nil
		}
		n++
		if strings.HasPrefix(p, "/dev/pts/") && d.Type()&fs.ModeCharDevice != 0 {
			return nil // pseudo-terminals of this container
		}
		if cfg.GVisor() && gVisorDev[p] {
			return nil
		}
		if !standardDev[p] || d.Type()&fs.ModeCharDevice == 0 {
			odd = append(odd, p)
		}
		return nil
	})
	if len(odd) > 0 {
		return fail("only null zero full random urandom tty console ptmx", "extra device nodes: "+joinSorted(odd))
	}
	return pass("only null zero full random urandom tty console ptmx", fmt.Sprintf("%d standard device nodes", n))
}

func checkProtected(cfg Config) Result {
	const want = "every write to a protected path is refused (EROFS, EACCES or EPERM)"
	if len(cfg.Protected) == 0 {
		return fail(want, "no protected path configured for the probe")
	}
	var obs []string
	ok := true
	note := func(what string, err error) {
		if err == nil || !(errors.Is(err, syscall.EROFS) || errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM)) {
			ok = false
		}
		obs = append(obs, what+": "+errName(err))
	}
	for _, p := range cfg.Protected {
		fi, err := os.Lstat(p)
		if err != nil {
			ok = false
			obs = append(obs, p+": "+errName(err))
			continue
		}
		if fi.IsDir() {
			f, err := os.OpenFile(filepath.Join(p, ".mass-probe-new"), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
			if err == nil {
				f.Close()
				os.Remove(filepath.Join(p, ".mass-probe-new"))
			}
			note("create in "+p, err)
			continue
		}
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
		if err == nil {
			f.Close()
		}
		note("append "+p, err)
		note("chmod "+p, os.Chmod(p, 0o777))
		note("truncate "+p, os.Truncate(p, 0))
		note("rename "+p, os.Rename(p, p+".moved"))
		note("unlink "+p, os.Remove(p))
	}
	return verdict(ok, want, short(strings.Join(obs, "; "), 400))
}

// readSmall reads at most n bytes of a file.
func readSmall(p string, n int64) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, n))
	return string(b), err
}
