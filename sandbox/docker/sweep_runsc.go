package docker

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mass-dev/mass/sandbox"
)

// On gVisor the host sees only the sandbox's own processes (the sentry,
// its gofer and stubs, one of them running as the agent's uid), so the
// host cgroup sweep does not apply: it would kill the sentry. The agent's
// processes live inside the sentry, which runsc reaches from the host:
// `runsc ps` lists them and `runsc kill --pid` signals them. A paused
// sandbox refuses signals, so SIGSTOP does the freezing: a stopped process
// can neither fork nor kill, and rounds of list-and-stop end when no agent
// process is left running; then every one gets SIGKILL. Nothing runs inside
// the box where the agent could kill it (F2).

// runscRoots are where runsc's state lives for the engine's containers,
// first match wins (Docker's containerd shim uses the runc root).
var runscRoots = []string{
	"/var/run/docker/runtime-runc/moby", "/run/docker/runtime-runc/moby",
	"/var/run/docker/runtime-runsc/moby", "/run/containerd/runsc/moby",
}

// runscCallTimeout bounds one runsc ps or kill call.
const runscCallTimeout = 10 * time.Second

// runscProc is one process as `runsc ps` lists it.
type runscProc struct {
	uid, pid, ppid int
	cmd            string
}

// sweepRunsc kills every process of the agent's uid inside the gVisor
// sandbox; keepSession spares the live file-helper session, which is the
// one agent process the host exec'd (parent pid 0) running the helper.
func (b *box) sweepRunsc(ctx context.Context, keepSession bool) error {
	bin, root, err := b.runscState(ctx)
	if err != nil {
		return err
	}
	uid, _, err := sandbox.ParseUser(b.policy.User)
	if err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	stopped := map[int]bool{}
	for round := 0; round < 4*sweepRounds; round++ {
		procs, err := runscPS(ctx, bin, root, b.id)
		if err != nil {
			return err
		}
		targets := agentProcs(procs, uid, keepSession && b.ops.live() != nil)
		fresh := 0
		for _, p := range targets {
			if !stopped[p.pid] {
				fresh++
				stopped[p.pid] = true
				runscKill(ctx, bin, root, b.id, p.pid, "STOP")
			}
		}
		if fresh > 0 {
			continue
		}
		for _, p := range targets {
			runscKill(ctx, bin, root, b.id, p.pid, "KILL")
		}
		if len(targets) == 0 {
			return nil
		}
		time.Sleep(time.Duration(round+1) * 5 * time.Millisecond)
	}
	return fmt.Errorf("sweep %s/%s: agent processes survive %d rounds under gVisor: %w", b.episode, b.agent, 4*sweepRounds, sandbox.ErrUnavailable)
}

// agentProcs are the processes of uid, minus the helper session when
// keepSession holds: the first exec'd one (parent pid 0) running the
// helper, which the agent cannot imitate (its processes all have a parent
// inside the sandbox).
func agentProcs(procs []runscProc, uid int, keepSession bool) []runscProc {
	var out []runscProc
	kept := !keepSession
	for _, p := range procs {
		if p.uid != uid {
			continue
		}
		if !kept && p.ppid == 0 && strings.HasPrefix("mass-sandbox-helper", p.cmd) && p.cmd != "" {
			kept = true
			continue
		}
		out = append(out, p)
	}
	return out
}

// runscState finds the runsc binary the engine runs and the state root
// holding this container.
func (b *box) runscState(ctx context.Context) (bin, root string, err error) {
	bin, err = b.r.runtimePath(ctx, sandbox.RuntimeRunsc)
	if err != nil {
		return "", "", err
	}
	for _, r := range runscRoots {
		if m, _ := filepath.Glob(filepath.Join(r, b.id+"*")); len(m) > 0 {
			return bin, r, nil
		}
	}
	return "", "", fmt.Errorf("sweep: no runsc state for %s under %s: %w", short(b.id), strings.Join(runscRoots, ", "), sandbox.ErrUnavailable)
}

// runscPS lists the processes of a gVisor container.
func runscPS(ctx context.Context, bin, root, id string) ([]runscProc, error) {
	ctx, cancel := context.WithTimeout(ctx, runscCallTimeout)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, "--root="+root, "ps", id)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("sweep: runsc ps %s: %v: %s: %w", short(id), err, strings.TrimSpace(stderr.String()), sandbox.ErrUnavailable)
	}
	return parseRunscPS(out)
}

// parseRunscPS reads `runsc ps` table output: UID PID PPID C TTY STIME TIME CMD.
func parseRunscPS(out []byte) ([]runscProc, error) {
	var procs []runscProc
	sc := bufio.NewScanner(bytes.NewReader(out))
	for line := 0; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if line == 0 || len(f) == 0 {
			continue
		}
		if len(f) < 7 {
			return nil, fmt.Errorf("sweep: runsc ps line %q: too few fields: %w", sc.Text(), sandbox.ErrUnavailable)
		}
		uid, e1 := strconv.Atoi(f[0])
		pid, e2 := strconv.Atoi(f[1])
		ppid, e3 := strconv.Atoi(f[2])
		if e1 != nil || e2 != nil || e3 != nil {
			return nil, fmt.Errorf("sweep: runsc ps line %q: not numeric: %w", sc.Text(), sandbox.ErrUnavailable)
		}
		cmd := ""
		if len(f) > 7 {
			cmd = strings.Join(f[7:], " ")
		}
		procs = append(procs, runscProc{uid: uid, pid: pid, ppid: ppid, cmd: cmd})
	}
	return procs, sc.Err()
}

// runscKill signals one process inside a gVisor container; a process
// already gone is not an error (the next `runsc ps` decides).
func runscKill(ctx context.Context, bin, root, id string, pid int, sig string) {
	ctx, cancel := context.WithTimeout(ctx, runscCallTimeout)
	defer cancel()
	_ = exec.CommandContext(ctx, bin, "--root="+root, "kill", "--pid", strconv.Itoa(pid), id, sig).Run()
}

// isRunsc reports whether the box runs under gVisor.
func (b *box) isRunsc() bool { return b.policy.Runtime == sandbox.RuntimeRunsc }
