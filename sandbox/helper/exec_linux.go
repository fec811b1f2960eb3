package helper

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ExitTimedOut is the wrapper's exit status when it killed a command at its timeout.
const ExitTimedOut = 124

// RunExec runs argv as a child and returns its exit status. The wrapper
// becomes a child subreaper, so every descendant, even one that called
// setsid, stays below it; on timeout, and when the command itself exits, the
// whole tree is killed. Status is 128+signal for a signalled command.
func RunExec(argv []string, timeout time.Duration) int {
	if len(argv) == 0 {
		fmt.Fprintln(os.Stderr, "mass-sandbox-helper exec: missing command")
		return 2
	}
	if err := EnsureSeccomp(); err != nil {
		fmt.Fprintf(os.Stderr, "mass-sandbox-helper exec: %v\n", err)
		return 2
	}
	// gVisor's 2022 release refuses PR_SET_CHILD_SUBREAPER (EINVAL); there
	// a descendant that left the process group is caught by the host's
	// sweep after the command (runsc ps/kill), not by this wrapper.
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		fmt.Fprintf(os.Stderr, "mass-sandbox-helper exec: subreaper: %v\n", err)
		return 2
	}
	// The wrapper itself ignores SIGPIPE/SIGHUP so it can still reap the tree.
	signal.Ignore(syscall.SIGHUP, syscall.SIGPIPE)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", argv[0], err)
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return 127
		}
		return 126
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var timer <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		timer = t.C
	}
	status := 0
	select {
	case err := <-done:
		status = exitStatus(cmd, err)
	case <-timer:
		killTree(cmd.Process.Pid)
		<-done
		status = ExitTimedOut
		fmt.Fprintf(os.Stderr, "\n[mass: command killed after %s timeout]\n", timeout)
	}
	killTree(0)
	return status
}

func exitStatus(cmd *exec.Cmd, err error) int {
	if err == nil {
		return 0
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
		if ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ws.ExitStatus()
	}
	return 1
}

// killTree kills the process group of pgid (when > 0) and then every
// descendant of this process until none is left.
func killTree(pgid int) {
	if pgid > 0 {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
	self := os.Getpid()
	for i := 0; i < 200; i++ {
		kids := descendants(self)
		for _, pid := range kids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		reaped := reapAll()
		if len(kids) == 0 && !reaped {
			return
		}
		if len(kids) > 0 && !reaped {
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// reapAll collects exited children without blocking; true if any was reaped.
func reapAll() bool {
	any := false
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return any
		}
		any = true
	}
}

// descendants lists the pids below root by scanning /proc.
func descendants(root int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pp, ok := parentOf(pid); ok {
			children[pp] = append(children[pp], pid)
		}
	}
	var out []int
	stack := []int{root}
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, c := range children[p] {
			out = append(out, c)
			stack = append(stack, c)
		}
	}
	return out
}

func parentOf(pid int) (int, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The command name may contain spaces and parentheses; fields follow the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0, false
	}
	pp, err := strconv.Atoi(f[1])
	return pp, err == nil
}

// KillAll sends SIGKILL to every process in the container that the caller
// may signal, except the container's init and itself. The container's main
// processes run under a uid of their own, so the kernel refuses to signal
// them (EPERM), and such refusals are not counted: the scan repeats, so that
// forks in flight die too, until one kills nothing.
func KillAll() error {
	self := os.Getpid()
	for i := 0; i < 50; i++ {
		ents, err := os.ReadDir("/proc")
		if err != nil {
			return fmt.Errorf("read /proc: %w", err)
		}
		killed := 0
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == 1 || pid == self {
				continue
			}
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				killed++
			}
		}
		if killed == 0 {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}

// KillOrphans kills every process that was reparented to the container's
// init (its exec wrapper died) together with its descendants. The init's own
// child, the main "pause", runs under another uid: the kill is refused and
// not counted. Processes of live commands are children of their wrapper and
// are left alone.
func KillOrphans() {
	self := os.Getpid()
	for i := 0; i < 50; i++ {
		killed := 0
		for _, pid := range descendants(1) {
			if pp, ok := parentOf(pid); !ok || pp != 1 || pid == self {
				continue
			}
			for _, v := range append([]int{pid}, descendants(pid)...) {
				if v != self && syscall.Kill(v, syscall.SIGKILL) == nil {
					killed++
				}
			}
		}
		if killed == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Pause blocks until SIGTERM or SIGINT. It is a container's main process;
// when the container has no init it is pid 1, so it also reaps orphans.
func Pause() {
	ch := make(chan os.Signal, 8)
	signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for sig := range ch {
		if sig == syscall.SIGCHLD {
			reapAll()
			continue
		}
		return
	}
}

// NoDump marks the process non-dumpable, so a process of the same uid can
// neither ptrace it nor open its /proc/PID/mem or fds: the agent cannot
// forge what the helper answers the host.
func NoDump() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl PR_SET_DUMPABLE: %w", err)
	}
	return nil
}
