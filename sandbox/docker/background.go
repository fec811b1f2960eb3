package docker

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/boxhost"
)

var _ sandbox.Backgrounder = (*box)(nil)

// bgProc is a background command's exec wrapper, named by host pid and
// start time (a pid alone could be reused by a later agent process).
type bgProc struct {
	pid   int
	start string
}

// Background starts req under the helper's exec wrapper, detached and
// without a timeout. The wrapper is a child subreaper, so every descendant
// of the command stays below it; the host sweep spares the wrapper's tree
// (spared) and nothing else. Only where the host sweep applies (runc,
// agents under their own uid) can the tree be told apart.
func (b *box) Background(ctx context.Context, req sandbox.ExecRequest) (int, error) {
	if len(req.Argv) == 0 || req.Argv[0] == "" {
		return 0, fmt.Errorf("background: empty argv: %w", sandbox.ErrInvalid)
	}
	if !b.hostSweep() || (b.policy.Runtime != "" && b.policy.Runtime != "runc") {
		return 0, fmt.Errorf("background commands need the host sweep of runc (runtime %q): %w", b.policy.Runtime, sandbox.ErrDenied)
	}
	dir := boxhost.WorkDir(req.Dir)
	// No sweep while the wrapper starts and before it is registered.
	b.gate.RLock()
	defer b.gate.RUnlock()
	argv := append([]string{HelperMount, "exec", "-timeout", "0s", "--"}, req.Argv...)
	ec, err := b.r.execCreate(ctx, b.id, container.ExecOptions{User: b.policy.User, WorkingDir: dir, Cmd: argv})
	if err != nil {
		return 0, wrapErr("background exec in "+b.agent, err)
	}
	if err := b.r.cli.ContainerExecStart(ctx, ec.ID, container.ExecStartOptions{Detach: true}); err != nil {
		return 0, wrapErr("start background exec in "+b.agent, err)
	}
	hostPID, err := b.r.execPID(ctx, ec.ID)
	if err != nil {
		return 0, err
	}
	st, err := procStart(hostPID)
	if hostPID == 0 || err != nil {
		return 0, nil // it has already ended: nothing to keep
	}
	b.mu.Lock()
	b.bg = append(b.bg, bgProc{pid: hostPID, start: st})
	b.mu.Unlock()
	return nsPID(hostPID), nil
}

// execPID waits (up to 10 s) for the engine to report the exec's host pid
// (0 for an exec that ended before it had one reported).
func (r *Runtime) execPID(ctx context.Context, execID string) (int, error) {
	ictx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		in, err := r.cli.ContainerExecInspect(ictx, execID)
		if err != nil {
			return 0, wrapErr("inspect background exec", err)
		}
		if in.Pid != 0 || !in.Running {
			return in.Pid, nil
		}
		select {
		case <-ictx.Done():
			return 0, wrapErr("inspect background exec", ictx.Err())
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// spared reports whether host pid belongs to a live background tree: it is
// a registered wrapper (same start time) or descends from one.
func (b *box) spared(pid int) bool {
	b.mu.Lock()
	bg := append([]bgProc(nil), b.bg...)
	b.mu.Unlock()
	if len(bg) == 0 {
		return false
	}
	for hop := 0; pid > 1 && hop < 64; hop++ {
		for _, p := range bg {
			if p.pid == pid {
				st, err := procStart(pid)
				return err == nil && st == p.start
			}
		}
		pid = procPPID(pid)
	}
	return false
}

// EndBackground forgets the background trees and sweeps: they die with
// every other leftover of the agent.
func (b *box) EndBackground(ctx context.Context) error {
	b.mu.Lock()
	n := len(b.bg)
	b.bg = nil
	b.mu.Unlock()
	if n == 0 {
		return nil
	}
	b.gate.Lock()
	defer b.gate.Unlock()
	return b.sweep(ctx, b.sessionPID(ctx))
}

// Hold pauses the container while background processes may run.
func (b *box) Hold(ctx context.Context) (func(context.Context), error) {
	b.mu.Lock()
	n := len(b.bg)
	b.mu.Unlock()
	if n == 0 {
		return func(context.Context) {}, nil
	}
	b.gate.Lock()
	if err := b.r.cli.ContainerPause(ctx, b.id); err != nil {
		b.gate.Unlock()
		return nil, wrapErr("hold background processes of "+b.agent, err)
	}
	return func(ctx context.Context) {
		defer b.gate.Unlock()
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := b.r.cli.ContainerUnpause(uctx, b.id); err != nil {
			b.r.log.Warn("release background processes", "agent", b.agent, "err", err)
		}
	}, nil
}

// procStat is the fields of /proc/PID/stat after the command name.
func procStat(pid int) ([]string, error) {
	bs, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil, err
	}
	s := string(bs)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil, fmt.Errorf("parse /proc/%d/stat", pid)
	}
	return strings.Fields(s[i+1:]), nil
}

// procPPID is a host pid's parent, 0 when unknown.
func procPPID(pid int) int {
	f, err := procStat(pid)
	if err != nil || len(f) < 2 {
		return 0
	}
	p, _ := strconv.Atoi(f[1])
	return p
}

// procStart is a host pid's start time in clock ticks (field 22 of stat).
func procStart(pid int) (string, error) {
	f, err := procStat(pid)
	if err != nil {
		return "", err
	}
	if len(f) < 20 {
		return "", fmt.Errorf("short /proc/%d/stat", pid)
	}
	return f[19], nil
}

// nsPID is the pid the sandbox sees for a host pid (the last NSpid entry).
func nsPID(hostPID int) int {
	bs, err := os.ReadFile("/proc/" + strconv.Itoa(hostPID) + "/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(bs), "\n") {
		if rest, ok := strings.CutPrefix(l, "NSpid:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				n, _ := strconv.Atoi(f[len(f)-1])
				return n
			}
		}
	}
	return 0
}
