package check

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// checkMainProcess attacks the container's main processes: the engine's
// init (pid 1) and the helper's "pause", which massd's kills (killall after
// a timeout, orphans after a command) never reach. They must run under a
// uid other than the agent's, so that the agent can neither trace them (to
// inject code that would outlive those kills) nor signal them.
func checkMainProcess(cfg Config) Result {
	const want = "pid 1 and the main pause run under another uid than the agent; ptrace seize and kill(pid, 0) on them fail with EPERM"
	pause := mainPause(cfg.Helper)
	if pause == 0 {
		return fail(want, "no `"+cfg.Helper+" pause` process found as pid 1 or a child of pid 1")
	}
	pids := []int{1}
	if pause != 1 {
		pids = append(pids, pause)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	me := []string{strconv.Itoa(os.Getuid()), strconv.Itoa(os.Geteuid())}
	ok := true
	var obs []string
	for _, pid := range pids {
		var uids []string
		st, err := statusOf(strconv.Itoa(pid))
		if err == nil {
			uids = strings.Fields(st["Uid"]) // real, effective, saved, filesystem
		}
		foreign := len(uids) == 4
		for _, u := range uids {
			for _, m := range me {
				if u == m {
					foreign = false
				}
			}
		}
		// PTRACE_SEIZE does not stop the tracee; the probe's exit detaches it.
		seize := unix.PtraceSeize(pid)
		sig := unix.Kill(pid, 0)
		if !foreign || !errors.Is(seize, unix.EPERM) || !errors.Is(sig, unix.EPERM) {
			ok = false
		}
		who := "uids " + strings.Join(uids, ",")
		if err != nil {
			who = "status " + errName(pathErr(err))
		}
		obs = append(obs, fmt.Sprintf("pid %d (%s): ptrace seize %s, kill 0 %s", pid, who, errName(seize), errName(sig)))
	}
	return verdict(ok, want, fmt.Sprintf("agent uid %d: %s", os.Getuid(), strings.Join(obs, "; ")))
}

// mainPause finds the container's main `helper pause`: pid 1 itself when
// the container has no init, else the lowest-numbered one whose parent is
// pid 1 (the init starts it first).
func mainPause(helper string) int {
	if isCmd(1, helper, "pause") {
		return 1
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	best := 0
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == 1 || (best != 0 && pid > best) || !isCmd(pid, helper, "pause") {
			continue
		}
		if st, err := statusOf(e.Name()); err == nil && st["PPid"] == "1" {
			best = pid
		}
	}
	return best
}

// isCmd reports whether pid's command line is exactly helper cmd.
func isCmd(pid int, helper, cmd string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return false
	}
	args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	return len(args) == 2 && args[0] == helper && args[1] == cmd
}
