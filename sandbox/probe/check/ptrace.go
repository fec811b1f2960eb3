package check

import (
	"errors"
	"os/exec"
	"runtime"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ptraceTarget is read from the child's memory: the child runs this same
// static binary, so the variable sits at the same address there.
var ptraceTarget = [8]byte{'m', 'a', 's', 's'}

// checkPtrace attacks a process the agent is otherwise entitled to trace: a
// dumpable child of its own, under its own uid. Only the seccomp profile
// stands in the way, and it must refuse with EPERM (the profile's
// defaultErrnoRet), as it then does for the file helper in the moment
// between its execve and its prctl(PR_SET_DUMPABLE, 0).
func checkPtrace(Config) Result {
	const want = "ptrace seize and attach, process_vm_readv and process_vm_writev on an own dumpable child fail with EPERM"
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	attempts := []struct {
		name string
		try  func(pid int) error
	}{
		{"ptrace seize", unix.PtraceSeize},
		{"ptrace attach", unix.PtraceAttach},
		{"process_vm_readv", func(pid int) error {
			var buf [8]byte
			return vmRW(unix.SYS_PROCESS_VM_READV, pid, buf[:])
		}},
		{"process_vm_writev", func(pid int) error {
			return vmRW(unix.SYS_PROCESS_VM_WRITEV, pid, ptraceTarget[:])
		}},
	}
	ok := true
	var obs []string
	for _, a := range attempts {
		// A fresh child each time: a successful seize or attach would make
		// the next attempt fail for the wrong reason.
		pid, stop, err := startTarget()
		if err != nil {
			return fail(want, "start a child: "+errName(err))
		}
		err = a.try(pid)
		stop()
		if !errors.Is(err, unix.EPERM) {
			ok = false
		}
		obs = append(obs, a.name+" "+errName(err))
	}
	return verdict(ok, want, "own child: "+strings.Join(obs, ", "))
}

// vmRW moves len(buf) bytes between buf and the same address in pid.
func vmRW(trap uintptr, pid int, buf []byte) error {
	local := unix.Iovec{Base: &buf[0], Len: uint64(len(buf))}
	remote := unix.Iovec{Base: &ptraceTarget[0], Len: uint64(len(buf))}
	_, _, e := unix.Syscall6(trap, uintptr(pid), uintptr(unsafe.Pointer(&local)), 1, uintptr(unsafe.Pointer(&remote)), 1, 0)
	if e != 0 {
		return e
	}
	return nil
}

// startTarget starts this binary as a long sleeper. stop kills it and reaps
// it, whatever ptrace state it is in (wait4 with __WALL sees ptrace stops).
func startTarget() (int, func(), error) {
	cmd := exec.Command("/proc/self/exe", "hold", "-marker", "ptrace-target", "-for", "60s")
	if err := cmd.Start(); err != nil {
		return 0, nil, err
	}
	pid := cmd.Process.Pid
	return pid, func() {
		unix.Kill(pid, unix.SIGKILL)
		for {
			var ws unix.WaitStatus
			if _, err := unix.Wait4(pid, &ws, unix.WALL, nil); err != nil || ws.Exited() || ws.Signaled() {
				break
			}
		}
		cmd.Process.Release()
	}, nil
}
