package helper

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// runsc applies no container seccomp profile at all as mass registers it
// (no --oci-seccomp: current gVisor would turn the profile's ENOSYS for
// clone3 into EPERM and break pthread_create), and gVisor's 2022 release
// applied it to the container's first process only: processes started by
// `docker exec`, which is every agent command and file helper, run
// unfiltered. EnsureSeccomp closes that gap: a process with no filter
// of its own installs a fallback one before it runs anything of the
// agent's, denying (EPERM) what the mass profile denies an agent without
// capabilities. Under runc the engine's filter is already there and
// nothing is added.

// deniedSyscalls fail with EPERM whatever their arguments.
var deniedSyscalls = []uint32{
	unix.SYS_PTRACE, unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV, unix.SYS_KCMP,
	unix.SYS_UNSHARE, unix.SYS_SETNS, unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT,
	unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY, unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN,
	unix.SYS_USERFAULTFD, unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE,
	unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD, unix.SYS_SETTIMEOFDAY, unix.SYS_CLOCK_SETTIME,
	unix.SYS_CLOCK_ADJTIME, unix.SYS_ADJTIMEX, unix.SYS_SYSLOG, unix.SYS_REBOOT, unix.SYS_SWAPON,
	unix.SYS_SWAPOFF, unix.SYS_ACCT, unix.SYS_QUOTACTL, unix.SYS_OPEN_BY_HANDLE_AT,
	unix.SYS_NAME_TO_HANDLE_AT, unix.SYS_IOPL, unix.SYS_IOPERM, unix.SYS_VHANGUP, unix.SYS_LOOKUP_DCOOKIE,
	unix.SYS_FANOTIFY_INIT, unix.SYS_CHROOT,
}

// nsFlags are clone's namespace flags; a clone asking for any is denied.
const nsFlags = unix.CLONE_NEWNS | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC | unix.CLONE_NEWUSER |
	unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWCGROUP

// Offsets into struct seccomp_data.
const (
	offNr   = 0
	offArch = 4
	offArg0 = 16
)

const (
	retAllow = unix.SECCOMP_RET_ALLOW
	retEPERM = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	retNoSys = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
	retKill  = unix.SECCOMP_RET_KILL_PROCESS
)

func stmt(code uint16, k uint32) unix.SockFilter { return unix.SockFilter{Code: code, K: k} }

func jeq(k uint32, jt, jf uint8) unix.SockFilter {
	return unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: jt, Jf: jf, K: k}
}

// fallbackFilter builds the BPF program: the x86-64 ABI only; the denied
// calls; clone with a namespace flag; mknod/mknodat of a device node;
// clone3 as ENOSYS (its flags sit in memory a filter cannot read, and libc
// falls back to clone); everything else allowed.
func fallbackFilter() []unix.SockFilter {
	ld := func(off uint32) unix.SockFilter { return stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, off) }
	ret := func(v uint32) unix.SockFilter { return stmt(unix.BPF_RET|unix.BPF_K, v) }
	p := []unix.SockFilter{ld(offArch), jeq(unix.AUDIT_ARCH_X86_64, 1, 0), ret(retKill), ld(offNr),
		// x32 system calls (bit 30) are refused outright.
		{Code: unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K, Jt: 0, Jf: 1, K: 0x40000000}, ret(retEPERM)}
	for _, nr := range deniedSyscalls {
		p = append(p, jeq(nr, 0, 1), ret(retEPERM))
	}
	p = append(p, jeq(unix.SYS_CLONE3, 0, 1), ret(retNoSys))
	// clone: flags in arg 0.
	p = append(p, jeq(unix.SYS_CLONE, 0, 4), ld(offArg0),
		unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K, Jt: 0, Jf: 1, K: nsFlags},
		ret(retEPERM), ret(retAllow))
	// mknod: mode in arg 1; mknodat: mode in arg 2.
	for _, c := range []struct{ nr, arg uint32 }{{unix.SYS_MKNOD, 1}, {unix.SYS_MKNODAT, 2}} {
		p = append(p, jeq(c.nr, 0, 6), ld(offArg0+8*c.arg),
			stmt(unix.BPF_ALU|unix.BPF_AND|unix.BPF_K, unix.S_IFMT),
			jeq(unix.S_IFCHR, 2, 0), jeq(unix.S_IFBLK, 1, 0), ret(retAllow), ret(retEPERM))
	}
	return append(p, ret(retAllow))
}

// EnsureSeccomp installs the fallback filter unless the process already
// runs under one. It sets no_new_privs first (the kernel requires it of a
// process without CAP_SYS_ADMIN, and the policy sets it anyway).
//
// Both are per-thread attributes and the Go runtime runs a process on
// several threads, any of which may fork the agent's command: the filter is
// installed with SECCOMP_FILTER_FLAG_TSYNC, which puts it (and
// no_new_privs) on every thread, and the calling goroutine stays locked to
// its thread for the rest of the process, so the two calls, and a fork that
// follows, all happen where the filter is.
func EnsureSeccomp() error {
	runtime.LockOSThread()
	mode, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0)
	if err != nil {
		return fmt.Errorf("seccomp: read mode: %w", err)
	}
	if mode != 0 {
		return nil
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("seccomp: no_new_privs: %w", err)
	}
	f := fallbackFilter()
	prog := unix.SockFprog{Len: uint16(len(f)), Filter: &f[0]}
	r, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&prog)))
	if e != 0 {
		return fmt.Errorf("seccomp: install the fallback filter on every thread: %w", e)
	}
	if r != 0 {
		// TSYNC returns the id of a thread it could not synchronise.
		return fmt.Errorf("seccomp: thread %d could not take the fallback filter", r)
	}
	return nil
}
