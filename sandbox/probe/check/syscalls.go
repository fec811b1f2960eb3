package check

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// NoopArg makes mass-probe exit 0 at once; the namespace checks start
// /proc/self/exe with it.
const NoopArg = "noop"

// syscallChecks are the syscalls an agent must be refused, in report order.
func syscallChecks() []named {
	return append(append(namespaceChecks(), kernelChecks()...), deviceChecks()...)
}

// namespaceChecks: mounts, namespaces and keyrings.
func namespaceChecks() []named {
	return []named{
		one("mount_denied", func(Config) Result {
			dir := filepath.Join(os.TempDir(), ".mass-probe-mnt")
			os.Mkdir(dir, 0o700)
			defer os.Remove(dir)
			err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=1m")
			if err == nil {
				unix.Unmount(dir, unix.MNT_DETACH)
			}
			return deniedResult("mount tmpfs", err)
		}),
		one("umount_denied", func(Config) Result {
			return deniedResult("umount /etc/hostname", unix.Unmount("/etc/hostname", unix.MNT_DETACH))
		}),
		one("unshare_user", func(Config) Result { return nsDenied(unix.CLONE_NEWUSER, "user") }),
		one("unshare_mount", func(Config) Result { return nsDenied(unix.CLONE_NEWNS, "mount") }),
		one("unshare_net", func(Config) Result { return nsDenied(unix.CLONE_NEWNET, "net") }),
		one("setns_denied", checkSetns),
		one("keyctl_denied", func(Config) Result {
			_, err := unix.KeyctlInt(unix.KEYCTL_GET_KEYRING_ID, unix.KEY_SPEC_SESSION_KEYRING, 1, 0, 0)
			return deniedResult("keyctl(GET_KEYRING_ID)", err)
		}),
		one("add_key_denied", func(Config) Result {
			_, err := unix.AddKey("user", "mass-probe", []byte("x"), unix.KEY_SPEC_PROCESS_KEYRING)
			return deniedResult("add_key(user)", err)
		}),
	}
}

// kernelChecks: interfaces into the kernel itself (bpf, perf, modules, clock, log).
func kernelChecks() []named {
	return []named{
		one("bpf_denied", func(Config) Result {
			attr := [4]uint32{1, 4, 4, 1} // BPF_MAP_TYPE_HASH, key 4, value 4, 1 entry
			fd, _, e := unix.Syscall(unix.SYS_BPF, 0, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr))
			return rawDenied("bpf(BPF_MAP_CREATE)", fd, e)
		}),
		one("perf_event_open_denied", func(Config) Result {
			attr := unix.PerfEventAttr{Type: unix.PERF_TYPE_SOFTWARE, Config: unix.PERF_COUNT_SW_CPU_CLOCK}
			attr.Size = uint32(unsafe.Sizeof(attr))
			fd, err := unix.PerfEventOpen(&attr, 0, -1, -1, 0)
			if err == nil {
				unix.Close(fd)
			}
			return deniedResult("perf_event_open(sw cpu clock)", err)
		}),
		one("userfaultfd_denied", func(Config) Result {
			fd, _, e := unix.Syscall(unix.SYS_USERFAULTFD, unix.O_CLOEXEC|unix.O_NONBLOCK, 0, 0)
			return rawDenied("userfaultfd", fd, e)
		}),
		one("init_module_denied", func(Config) Result {
			empty := []byte{0}
			_, _, e := unix.Syscall(unix.SYS_INIT_MODULE, uintptr(unsafe.Pointer(&empty[0])), 0, uintptr(unsafe.Pointer(&empty[0])))
			return rawDenied("init_module", 0, e)
		}),
		one("finit_module_denied", func(Config) Result {
			f, err := os.Open("/dev/null")
			if err != nil {
				return fail("finit_module denied", "open /dev/null: "+errName(err))
			}
			defer f.Close()
			empty := []byte{0}
			_, _, e := unix.Syscall(unix.SYS_FINIT_MODULE, f.Fd(), uintptr(unsafe.Pointer(&empty[0])), 0)
			return rawDenied("finit_module", 0, e)
		}),
		one("kexec_load_denied", func(Config) Result {
			_, _, e := unix.Syscall6(unix.SYS_KEXEC_LOAD, 0, 0, 0, 0, 0, 0)
			return rawDenied("kexec_load", 0, e)
		}),
		one("settimeofday_denied", func(Config) Result {
			tv := unix.NsecToTimeval(time.Now().UnixNano())
			err1 := unix.Settimeofday(&tv)
			ts := unix.NsecToTimespec(time.Now().UnixNano())
			err2 := unix.ClockSettime(unix.CLOCK_REALTIME, &ts)
			obs := fmt.Sprintf("settimeofday: %s; clock_settime: %s", errName(err1), errName(err2))
			return verdict(denied(err1) && denied(err2), "denied", obs)
		}),
		one("syslog_denied", func(Config) Result {
			buf := make([]byte, 256)
			n, _, e := unix.Syscall(unix.SYS_SYSLOG, 3, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
			return rawDenied("syslog(READ_ALL)", n, e)
		}),
	}
}

// deviceChecks: raw sockets, device nodes and tracing other processes.
func deviceChecks() []named {
	return []named{
		one("raw_socket_denied", func(Config) Result {
			fd, err := unix.Socket(unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP)
			if err == nil {
				unix.Close(fd)
			}
			return deniedResult("socket(AF_INET, SOCK_RAW)", err)
		}),
		one("packet_socket_denied", func(Config) Result {
			fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, int(htons(unix.ETH_P_ALL)))
			if err == nil {
				unix.Close(fd)
			}
			return deniedResult("socket(AF_PACKET, SOCK_RAW)", err)
		}),
		one("mknod_denied", func(cfg Config) Result {
			var obs []string
			ok := true
			for _, dir := range []string{os.TempDir(), cfg.Workspace} {
				p := filepath.Join(dir, ".mass-probe-null")
				err := unix.Mknod(p, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3)))
				if err == nil {
					os.Remove(p)
					ok = false
				}
				obs = append(obs, "mknod "+p+": "+errName(err))
			}
			return verdict(ok, "denied", strings.Join(obs, "; "))
		}),
		one("ptrace_denied", checkPtrace),
	}
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

func deniedResult(what string, err error) Result {
	return verdict(denied(err), "denied", what+": "+errName(err))
}

func rawDenied(what string, ret uintptr, e syscall.Errno) Result {
	if e == 0 {
		if what != "syslog(READ_ALL)" && what != "init_module" && what != "finit_module" && what != "kexec_load" {
			unix.Close(int(ret))
		}
		return fail("denied", what+": success")
	}
	return pass("denied", what+": "+errName(e))
}

// nsDenied starts a child that asks for a new namespace both ways: clone
// with the flag, and unshare after fork (a multi-threaded Go process cannot
// unshare a user namespace itself, which would pass for the wrong reason).
func nsDenied(flag uintptr, kind string) Result {
	try := func(attr *syscall.SysProcAttr) error {
		cmd := exec.Command("/proc/self/exe", NoopArg)
		cmd.SysProcAttr = attr
		return cmd.Run()
	}
	errClone := try(&syscall.SysProcAttr{Cloneflags: flag})
	errUnshare := try(&syscall.SysProcAttr{Unshareflags: flag})
	obs := fmt.Sprintf("clone(%s): %s; unshare(%s): %s", kind, errName(errClone), kind, errName(errUnshare))
	return verdict(denied(errClone) && denied(errUnshare), "new "+kind+" namespace denied", obs)
}

func checkSetns(Config) Result {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var obs []string
	ok := true
	for _, ns := range []struct {
		file string
		flag int
	}{{"net", unix.CLONE_NEWNET}, {"mnt", unix.CLONE_NEWNS}, {"pid", unix.CLONE_NEWPID}} {
		f, err := os.Open("/proc/self/ns/" + ns.file)
		if err != nil {
			obs = append(obs, ns.file+": open "+errName(err))
			continue
		}
		err = unix.Setns(int(f.Fd()), ns.flag)
		f.Close()
		if err == nil {
			ok = false
		}
		obs = append(obs, "setns("+ns.file+"): "+errName(err))
	}
	return verdict(ok, "denied", strings.Join(obs, "; "))
}
