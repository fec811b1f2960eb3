package docker

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mass-dev/mass/sandbox"
)

// sweepRounds bounds freeze-kill-thaw rounds of one sweep.
const sweepRounds = 10

// sweep kills every process of the agent's uid in the box from the host,
// except the host pid keep (the live file-helper session; 0 spares none).
// It reads the container's cgroup, freezes the container (docker pause)
// while it sends SIGKILL, and thaws it: a frozen process can neither fork
// nor run a single instruction before it dies, so no guardian outlives the
// sweep, and nothing here runs inside the box where the agent could kill
// it (F2).
func (b *box) sweep(ctx context.Context, keep int) error {
	procs, err := b.cgroupProcsFile(ctx)
	if err != nil {
		return err
	}
	uid, _, err := sandbox.ParseUser(b.policy.User)
	if err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	for round := 0; round < sweepRounds; round++ {
		pids, err := agentPIDs(procs, uid, b.keep(keep))
		if err != nil {
			return err
		}
		if len(pids) == 0 && round == 0 {
			// A fork in flight may be missed by one read; a second read
			// cannot miss both parent and child.
			if pids, err = agentPIDs(procs, uid, b.keep(keep)); err != nil || len(pids) == 0 {
				return err
			}
		}
		if len(pids) == 0 {
			return nil
		}
		if err := b.killFrozen(ctx, procs, uid, keep); err != nil {
			return err
		}
		time.Sleep(time.Duration(round+1) * 5 * time.Millisecond)
	}
	return fmt.Errorf("sweep %s/%s: agent processes survive %d rounds: %w", b.episode, b.agent, sweepRounds, sandbox.ErrUnavailable)
}

// killFrozen pauses the container, SIGKILLs the agent's processes and
// unpauses it; the kills are delivered as the processes thaw.
func (b *box) killFrozen(ctx context.Context, procs string, uid, keep int) error {
	if err := b.r.cli.ContainerPause(ctx, b.id); err != nil {
		return wrapErr("sweep: freeze "+b.agent, err)
	}
	pids, err := agentPIDs(procs, uid, b.keep(keep))
	var kerr error
	for _, p := range pids {
		if e := syscall.Kill(p, syscall.SIGKILL); e != nil && !errors.Is(e, syscall.ESRCH) {
			kerr = fmt.Errorf("sweep: kill %d: %w", p, e)
		}
	}
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if e := b.r.cli.ContainerUnpause(uctx, b.id); e != nil {
		return errors.Join(err, kerr, wrapErr("sweep: thaw "+b.agent, e))
	}
	return errors.Join(err, kerr)
}

// cgroupProcsFile is the host path of the cgroup.procs file listing every
// process of the box (found once from its init's cgroup).
func (b *box) cgroupProcsFile(ctx context.Context) (string, error) {
	b.mu.Lock()
	p := b.procs
	b.mu.Unlock()
	if p != "" {
		return p, nil
	}
	in, err := b.r.cli.ContainerInspect(ctx, b.id)
	if err != nil {
		return "", wrapErr("sweep: inspect "+b.agent, err)
	}
	if in.State == nil || in.State.Pid == 0 {
		return "", fmt.Errorf("sweep: %s is not running: %w", b.agent, sandbox.ErrNotFound)
	}
	p, err = procsFile(in.State.Pid)
	if err != nil {
		return "", err
	}
	b.mu.Lock()
	b.procs = p
	b.mu.Unlock()
	return p, nil
}

// procsFile maps a host pid's cgroup onto its cgroup.procs file: the
// unified hierarchy when mounted as such, else the v1 pids controller.
func procsFile(pid int) (string, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return "", fmt.Errorf("sweep: read cgroup of %d: %w", pid, err)
	}
	defer f.Close()
	var v1, v2 string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			v2 = filepath.Join("/sys/fs/cgroup", parts[2], "cgroup.procs")
		case strings.Contains(","+parts[1]+",", ",pids,"):
			v1 = filepath.Join("/sys/fs/cgroup/pids", parts[2], "cgroup.procs")
		}
	}
	for _, c := range []string{v1, v2} {
		if c == "" || strings.Contains(c, "..") {
			continue
		}
		if _, err := os.Stat(c); err == nil {
			return c, nil
		}
	}
	return "", fmt.Errorf("sweep: no cgroup.procs for pid %d (v1 %q, v2 %q): %w", pid, v1, v2, sandbox.ErrUnavailable)
}

// keep spares the host pid session and every background tree.
func (b *box) keep(session int) func(int) bool {
	return func(pid int) bool { return pid == session || b.spared(pid) }
}

// agentPIDs lists the pids in procs running under uid, except those keep spares.
func agentPIDs(procs string, uid int, keep func(int) bool) ([]int, error) {
	b, err := os.ReadFile(procs)
	if err != nil {
		return nil, fmt.Errorf("sweep: read %s: %w", procs, err)
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		pid, err := strconv.Atoi(f)
		if err != nil || keep(pid) {
			continue
		}
		if procUID(pid) == uid {
			out = append(out, pid)
		}
	}
	return out, nil
}

// procUID is the real uid of a host pid, -1 when it is gone.
func procUID(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "Uid:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				if u, err := strconv.Atoi(f[0]); err == nil {
					return u
				}
			}
		}
	}
	return -1
}
