package check

import (
	"fmt"
	"os"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

func helperChecks() []named {
	return []named{one("helper_not_traceable", checkHelperTrace), one("main_process_foreign", checkMainProcess),
		one("helper_startup_race", checkHelperStartupRace)}
}

// checkHelperTrace attacks a live file helper session (the runner starts
// one before the static checks): the agent runs under the helper's uid, so
// only the helper being non-dumpable keeps it from attaching with ptrace or
// reading its memory and fds, and so from forging what massd is told.
func checkHelperTrace(cfg Config) Result {
	const want = "the running file helper (serve) refuses ptrace attach, /proc/PID/mem and /proc/PID/fd"
	pid := findHelper(cfg.Helper, "serve")
	if pid == 0 {
		return fail(want, "no running `"+cfg.Helper+" serve` process found")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// PTRACE_SEIZE does not stop the tracee; the probe's exit detaches it.
	seize := unix.PtraceSeize(pid)
	p := "/proc/" + strconv.Itoa(pid)
	mem, memErr := os.Open(p + "/mem")
	if memErr == nil {
		mem.Close()
	}
	_, fdErr := os.Readlink(p + "/fd/1")
	ok := seize != nil && memErr != nil && fdErr != nil
	return verdict(ok, want, fmt.Sprintf("helper pid %d: ptrace seize %s, open mem %s, readlink fd/1 %s",
		pid, errName(seize), errName(pathErr(memErr)), errName(pathErr(fdErr))))
}

// findHelper finds a process whose command line is exactly helper cmd. Its
// /proc/PID/exe cannot identify it: a non-dumpable process hides that link.
func findHelper(helper, cmd string) int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err == nil && pid != os.Getpid() && isCmd(pid, helper, cmd) {
			return pid
		}
	}
	return 0
}

// pathErr unwraps an *os.PathError to its errno.
func pathErr(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	if le, ok := err.(*os.LinkError); ok {
		return le.Err
	}
	return err
}
