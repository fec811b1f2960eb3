package check

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// raceBudget is how long helper_startup_race attacks; raceRounds caps the
// helpers it starts.
const (
	raceBudget = 1500 * time.Millisecond
	raceRounds = 400
)

// checkHelperStartupRace attacks the window between a helper's exec and its
// PR_SET_DUMPABLE call: it starts `helper serve` itself, spins until the exec
// has happened (the command line is the helper's), stops it and tries to
// open its /proc/PID/mem and read its stdin link. A readable helper binary
// loses that race nearly every time; an unreadable one (mode 0711, not the
// agent's) is non-dumpable from exec on, so no round may win.
func checkHelperStartupRace(cfg Config) Result {
	if cfg.GVisor() {
		return checkSessionStartsAlone(cfg)
	}
	const want = "0 wins: a helper just exec'd is already non-dumpable (its binary is unreadable to the agent)"
	readable := "unreadable"
	if f, err := os.Open(cfg.Helper); err == nil {
		f.Close()
		readable = "READABLE"
	}
	deadline := time.Now().Add(raceBudget)
	rounds, wins, seen := 0, 0, 0
	var lastErr error
	for rounds < raceRounds && time.Now().Before(deadline) {
		rounds++
		won, exec, err := raceOnce(cfg.Helper)
		if err != nil {
			lastErr = err
			continue
		}
		if exec {
			seen++
		}
		if won {
			wins++
		}
	}
	obs := fmt.Sprintf("%d wins in %d rounds (%d caught right after exec); binary %s", wins, rounds, seen, readable)
	if lastErr != nil {
		obs += "; last error: " + lastErr.Error()
	}
	return verdict(wins == 0 && seen > 0, want, obs)
}

// checkSessionStartsAlone is helper_startup_race under runsc, where the
// binary must be readable (gVisor cannot execute it otherwise) and the
// race above is won by design: there massd starts a file-helper session
// only while no agent process lives, so no agent process can ever see one
// starting. The probe kills the live session (it may: the helper runs
// under its uid) while the runner keeps asking for file operations, and
// watches for a new session for the budget: any new one is a loss.
func checkSessionStartsAlone(cfg Config) Result {
	const want = "runsc: no file-helper session starts while agent code runs (binary readable; sessions start with no agent process alive)"
	old := map[int]bool{}
	for _, pid := range findHelpers(cfg.Helper, "serve") {
		old[pid] = true
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	deadline := time.Now().Add(2 * raceBudget)
	seen := map[int]bool{}
	for time.Now().Before(deadline) {
		for _, pid := range findHelpers(cfg.Helper, "serve") {
			if !old[pid] {
				seen[pid] = true
			}
		}
		time.Sleep(time.Millisecond)
	}
	return verdict(len(seen) == 0, want, fmt.Sprintf("killed %d live session(s); %d new session(s) started while the probe ran", len(old), len(seen)))
}

// findHelpers lists the processes whose command line is exactly helper cmd.
func findHelpers(helper, cmd string) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err == nil && pid != os.Getpid() && isCmd(pid, helper, cmd) {
			out = append(out, pid)
		}
	}
	return out
}

// raceOnce starts one helper and attacks it; exec reports whether the
// attack ran after the exec (so the round counted).
func raceOnce(helper string) (won, exec bool, err error) {
	r, w, err := os.Pipe()
	if err != nil {
		return false, false, err
	}
	defer w.Close()
	p, err := os.StartProcess(helper, []string{helper, "serve"}, &os.ProcAttr{Files: []*os.File{r, nil, nil}})
	r.Close()
	if err != nil {
		return false, false, fmt.Errorf("start helper: %w", err)
	}
	defer func() {
		_ = p.Kill()
		_, _ = p.Wait()
	}()
	proc := "/proc/" + strconv.Itoa(p.Pid)
	for i := 0; i < 200000; i++ {
		b, err := os.ReadFile(proc + "/cmdline")
		if err == nil && strings.HasSuffix(string(b), "serve\x00") && strings.HasPrefix(string(b), helper+"\x00") {
			exec = true
			break
		}
	}
	if !exec {
		return false, false, nil
	}
	_ = syscall.Kill(p.Pid, syscall.SIGSTOP)
	if f, err := os.Open(proc + "/mem"); err == nil {
		f.Close()
		won = true
	}
	if _, err := os.Readlink(proc + "/fd/0"); err == nil {
		won = true
	}
	return won, true, nil
}
