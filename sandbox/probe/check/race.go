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
