package probe

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/probe/check"
)

const (
	bombHold      = 3 * time.Second
	slack         = 32 << 20 // how far past a cap the bombs and fills go
	responsiveMax = 5 * time.Second
)

// resources runs the exhaustion probes, one at a time, in agent A.
func (r *run) resources(ctx context.Context) error {
	ref := r.o.Reference
	cfg := r.config()
	if err := r.forkBomb(ctx, cfg); err != nil {
		return err
	}
	// The engine limit adds what the box's tmpfs filesystems hold (their
	// pages are charged to the writer; see docker.chargeTmpfs).
	memLimit := ref.MemoryBytes
	if memLimit > 0 {
		memLimit += max(r.o.Policy.TmpfsBytes, 0) + r.diskCap
	}
	if err := r.memBomb(ctx, memLimit); err != nil {
		return err
	}
	fills := []struct {
		name, dir string
		capB      int64
	}{
		{"tmp_fill_cap", "/tmp", ref.TmpfsBytes},
		{"workspace_fill_cap", sandbox.WorkspaceMount, cfg.DiskBytes},
	}
	for _, f := range fills {
		capB := f.capB
		if capB <= 0 {
			capB = ProbeWorkspaceBytes
		}
		rs, _, err := r.exec(ctx, r.a, 2*time.Minute, "fill", "-name", f.name, "-dir", f.dir,
			"-cap", strconv.FormatInt(f.capB, 10), "-max", strconv.FormatInt(capB+slack, 10))
		if err != nil {
			return err
		}
		r.report.add(rs...)
	}
	if r.runtime == sandbox.RuntimeRunsc {
		r.report.add(r.burnHostSide(ctx, cfg))
		return nil
	}
	rs, _, err := r.exec(ctx, r.a, time.Minute, "burn", "-config", mustJSON(cfg), "-threads", "2", "-for", "2s")
	if err != nil {
		return err
	}
	r.report.add(rs...)
	return nil
}

// burnHostSide is cpu_burn_capped under runsc: gVisor's guest clocks and
// cgroup files are its own, so the quota and the use are read on the host,
// from the cgroup of the box's sandbox, around the same burn.
func (r *run) burnHostSide(ctx context.Context, cfg check.Config) check.Result {
	limit := float64(cfg.NanoCPUs) / 1e9
	res := check.Result{Name: "cpu_burn_capped", Expected: fmt.Sprintf("runsc: host cgroup quota %.2f CPU on the box's sandbox and its measured use within it", limit)}
	id := r.a.ID()
	read := func(p string) int64 {
		b, err := os.ReadFile(p)
		if err != nil {
			return -1
		}
		n, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		return n
	}
	cg := r.hostCgroup(ctx)
	quotaUS := read("/sys/fs/cgroup/cpu/" + cg + "/cpu.cfs_quota_us")
	periodUS := read("/sys/fs/cgroup/cpu/" + cg + "/cpu.cfs_period_us")
	usage := "/sys/fs/cgroup/cpuacct/" + cg + "/cpuacct.usage"
	before, start := read(usage), time.Now()
	_, _, err := r.exec(ctx, r.a, time.Minute, "burn", "-config", mustJSON(cfg), "-threads", "2", "-for", "2s")
	after, wall := read(usage), time.Since(start).Seconds()
	if err != nil || quotaUS <= 0 || periodUS <= 0 || before < 0 || after < 0 {
		res.Observed = fmt.Sprintf("host cgroup v1 files of %s: quota %d period %d usage %d..%d, burn error %v", short(id, 12), quotaUS, periodUS, before, after, err)
		return res
	}
	quota := float64(quotaUS) / float64(periodUS)
	used := float64(after-before) / 1e9 / wall
	res.OK = limit > 0 && math.Abs(quota-limit) < 0.01 && used <= limit*1.25+0.05
	res.Observed = fmt.Sprintf("host quota %.2f CPU; the sandbox used %.2f CPU over %.1fs", quota, used, wall)
	return res
}

// forkBomb runs the bomb in A and, while it holds its children, checks that
// the host can still start a process and agent B can still exec.
func (r *run) forkBomb(ctx context.Context, cfg check.Config) error {
	var wg sync.WaitGroup
	var rs []check.Result
	var bombErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		rs, _, bombErr = r.exec(ctx, r.a, 2*time.Minute, "forkbomb", "-config", mustJSON(cfg), "-hold", bombHold.String())
	}()
	time.Sleep(bombHold / 2)
	var hostWorst time.Duration
	var hostErr error
	for i := 0; i < 3; i++ {
		start := time.Now()
		if err := exec.CommandContext(ctx, "/bin/true").Run(); err != nil {
			hostErr = err
		}
		hostWorst = max(hostWorst, time.Since(start))
	}
	bctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	start := time.Now()
	bres, berr := r.b.Exec(bctx, sandbox.ExecRequest{Argv: []string{probePath, check.NoopArg}, Timeout: 20 * time.Second})
	bTook := time.Since(start)
	cancel()
	wg.Wait()
	if r.runtime == sandbox.RuntimeRunsc && (bombErr != nil || !r.aRunning(ctx)) {
		// (gVisor's sandbox may die just after the bomb's exec returned.)
		if bombErr == nil {
			bombErr = fmt.Errorf("box A stopped after the fork bomb: %w", sandbox.ErrNotFound)
		}
		res, err := r.bombEndedBox(ctx, bombErr)
		if err != nil {
			return err
		}
		rs, bombErr = []check.Result{res}, nil
	} else if r.runtime == sandbox.RuntimeRunsc && bombErr == nil {
		// A gVisor sandbox that met the host pids cap and lived may be
		// left unable to start processes; the probes that follow get a
		// fresh box A.
		if err := r.remakeA(ctx); err != nil {
			return err
		}
	}
	if bombErr != nil {
		return bombErr
	}
	r.report.add(rs...)
	r.report.add(check.Result{Name: "host_responsive_during_forkbomb", OK: hostErr == nil && hostWorst < responsiveMax,
		Expected: fmt.Sprintf("host starts a process in under %s", responsiveMax),
		Observed: fmt.Sprintf("worst /bin/true %s, error %v", hostWorst.Round(time.Millisecond), hostErr)})
	r.report.add(check.Result{Name: "other_agent_responsive_during_forkbomb", OK: berr == nil && bres.ExitCode == 0 && bTook < 10*time.Second,
		Expected: "second agent runs a command in under 10s",
		Observed: fmt.Sprintf("exit %d in %s, error %v", bres.ExitCode, bTook.Round(time.Millisecond), berr)})
	return nil
}

// bombEndedBox handles a fork bomb under runsc on the ptrace platform,
// where every guest process costs host threads: at the host pids cap
// gVisor's sandbox dies instead of failing the fork, so the bomb ends its
// own box (and only it). forkbomb_pids_limit then passes when box A is
// really gone (a bomb that failed any other way is an error), and A is
// made again for the probes that follow.
func (r *run) bombEndedBox(ctx context.Context, bombErr error) (check.Result, error) {
	const want = "runsc: the bomb is stopped at the pids cap: its forks fail, or gVisor's sandbox of that box dies at the host cap"
	ended, err := r.remakeEndedA(ctx, "fork bomb", bombErr)
	if err != nil {
		return check.Result{}, err
	}
	// Without a pids cap the bomb was stopped by something else (the
	// memory limit's OOM kill): that is no pids limit.
	return check.Result{Name: "forkbomb_pids_limit", OK: r.o.Policy.PidsLimit > 0, Expected: want,
		Observed: fmt.Sprintf("box A's sandbox ended (%s) at the host pids cap %d", ended, r.o.Policy.PidsLimit)}, nil
}

// aRunning reports whether box A's container still runs (true when the
// engine cannot say).
func (r *run) aRunning(ctx context.Context) bool {
	time.Sleep(time.Second)
	if r.o.Engine == nil {
		running, _ := r.aListed(ctx)
		return running
	}
	in, err := r.o.Engine.ContainerInspect(ctx, r.a.ID())
	return err != nil || in.State == nil || in.State.Running
}

// aListed is box A's state in the runtime's own listing, for a runtime
// without a Docker engine (the kubernetes backend: the pod's phase):
// whether it runs (true when the listing cannot say) and the state.
func (r *run) aListed(ctx context.Context) (bool, string) {
	infos, err := r.o.Runtime.List(ctx, r.episode)
	if err != nil {
		return true, "unknown: " + err.Error()
	}
	for _, in := range infos {
		if in.ID == r.a.ID() {
			return strings.EqualFold(in.State, "running"), in.State
		}
	}
	return false, "gone"
}

// remakeEndedA checks that box A's container is no longer running after
// what (else it returns cause), removes it and makes probe-a again; it
// returns how A ended.
func (r *run) remakeEndedA(ctx context.Context, what string, cause error) (string, error) {
	if r.o.Engine == nil {
		running, state := r.aListed(ctx)
		for i := 0; i < 30 && running; i++ {
			time.Sleep(500 * time.Millisecond)
			running, state = r.aListed(ctx)
		}
		if running {
			return "", fmt.Errorf("%s under runsc failed with box A still running: %w", what, cause)
		}
		if err := r.remakeA(ctx); err != nil {
			return "", fmt.Errorf("after the %s: %w", what, err)
		}
		return state + " (the runtime's listing)", nil
	}
	// A dying gVisor sandbox takes a moment to be seen stopped by the
	// engine (its Sentry ends first, the shim then reports the exit).
	in, err := r.o.Engine.ContainerInspect(ctx, r.a.ID())
	for i := 0; i < 30 && err == nil && in.State != nil && in.State.Running; i++ {
		time.Sleep(500 * time.Millisecond)
		in, err = r.o.Engine.ContainerInspect(ctx, r.a.ID())
	}
	if err != nil || in.State == nil || in.State.Running {
		return "", fmt.Errorf("%s under runsc failed with box A still running: %w", what, cause)
	}
	ended := fmt.Sprintf("%s, exit %d, oom-killed %v", in.State.Status, in.State.ExitCode, in.State.OOMKilled)
	if err := r.remakeA(ctx); err != nil {
		return "", fmt.Errorf("after the %s: %w", what, err)
	}
	return ended, nil
}

// remakeA removes box A and makes probe-a again on the same workspace.
func (r *run) remakeA(ctx context.Context) error {
	_ = r.a.Remove(ctx)
	sb, err := r.o.Runtime.Create(ctx, sandbox.Spec{Episode: r.episode, Agent: "probe-a", Image: r.o.Image, Policy: r.o.Policy, Env: r.o.Env})
	if err != nil {
		return fmt.Errorf("make probe-a again: %w", err)
	}
	r.a = sb
	return nil
}

// memBomb touches memory past the limit and expects an OOM kill with no swap.
func (r *run) memBomb(ctx context.Context, limit int64) error {
	const name = "memory_bomb_oom"
	want := fmt.Sprintf("SIGKILL by the OOM killer at the %d MiB limit, no swap", limit>>20)
	if limit <= 0 {
		r.report.add(check.Result{Name: name, Expected: "a memory limit", Observed: "the reference policy has no memory limit"})
		return nil
	}
	before, err := r.memStat(ctx)
	if err != nil && r.runtime == sandbox.RuntimeRunsc {
		// Box A may still be going down from the fork bomb before it.
		if err = r.remakeA(ctx); err == nil {
			before, err = r.memStat(ctx)
		}
	}
	if err != nil {
		return err
	}
	hostBefore := r.hostOOMKills()
	res, err := r.a.Exec(ctx, sandbox.ExecRequest{Argv: []string{probePath, "membomb", "-max", strconv.FormatInt(limit+4*slack, 10)},
		Timeout: 2 * time.Minute, MaxBytes: check.MaxOutput})
	if err != nil && r.runtime == sandbox.RuntimeRunsc {
		// The host's OOM killer takes gVisor's sandbox (the cgroup's
		// biggest process): the bomb ends its own box, and only it.
		return r.memBombEndedBox(ctx, name, limit, err)
	}
	if err != nil {
		return fmt.Errorf("run memory bomb: %w", err)
	}
	after, err := r.memStat(ctx)
	if err != nil && r.runtime == sandbox.RuntimeRunsc {
		// (gVisor's sandbox may die just after the bomb's exec returned.)
		return r.memBombEndedBox(ctx, name, limit, err)
	}
	if err != nil {
		return err
	}
	noSwap := after.SwapBytes == 0 || (after.SwapBytes < 0 && after.HostSwap == 0)
	killed := res.ExitCode == 128+9
	obs := fmt.Sprintf("exit %d, cgroup oom_kill %d -> %d, limit %d MiB, swap allowance %d, host swap %d",
		res.ExitCode, before.OOMKills, after.OOMKills, after.LimitBytes>>20, after.SwapBytes, after.HostSwap)
	if r.runtime == sandbox.RuntimeRunsc {
		// gVisor's own memory cgroup does not count the kill when the
		// host's OOM killer takes the bomb's stub process (systrap): the
		// Sentry then SIGKILLs the task and the box lives. The host
		// cgroup of the box's sandbox counts it.
		hostAfter := r.hostOOMKills()
		obs += fmt.Sprintf("; host cgroup oom_kill %d -> %d", hostBefore, hostAfter)
		if hostAfter > hostBefore && hostBefore >= 0 {
			after.OOMKills = max(after.OOMKills, before.OOMKills+1)
		}
	}
	if !killed {
		if rs, err := check.ParseResults(res.Stdout); err == nil && len(rs) == 1 {
			obs = rs[0].Observed + "; " + obs
		}
	}
	ok := killed && after.OOMKills > before.OOMKills && noSwap && after.LimitBytes > 0 && after.LimitBytes <= limit
	r.report.add(check.Result{Name: name, OK: ok, Expected: want, Observed: obs})
	return nil
}

func (r *run) memStat(ctx context.Context) (check.MemStat, error) {
	res, err := r.a.Exec(ctx, sandbox.ExecRequest{Argv: []string{probePath, "memstat"}, Timeout: 30 * time.Second, MaxBytes: 4096})
	if err != nil {
		return check.MemStat{}, fmt.Errorf("read memory cgroup: %w", err)
	}
	var st check.MemStat
	if err := json.Unmarshal(res.Stdout, &st); err != nil {
		return check.MemStat{}, fmt.Errorf("read memory cgroup: exit %d: %w", res.ExitCode, err)
	}
	return st, nil
}

// memBombEndedBox records a memory bomb under runsc that ended its own box
// (the host's OOM killer took gVisor's sandbox) and makes box A again.
func (r *run) memBombEndedBox(ctx context.Context, name string, limit int64, cause error) error {
	ended, err := r.remakeEndedA(ctx, "memory bomb", cause)
	if err != nil {
		return err
	}
	r.report.add(check.Result{Name: name, OK: true,
		Expected: fmt.Sprintf("runsc: the bomb is stopped at the %d MiB limit: OOM kill in the box, or of gVisor's sandbox by the host", limit>>20),
		Observed: "box A's sandbox ended: " + ended})
	return nil
}

// HostCgrouper is a box that names the host cgroup (v1, relative to each
// controller's mount) holding its sandbox; a box that is not one is the
// Docker engine's, in docker/<id>. The host-side probes read it on this
// machine, so they hold only where the box runs here.
type HostCgrouper interface {
	HostCgroup(ctx context.Context) (string, error)
}

func (r *run) hostCgroup(ctx context.Context) string {
	if h, ok := r.a.(HostCgrouper); ok {
		if cg, err := h.HostCgroup(ctx); err == nil {
			return cg
		}
	}
	return "docker/" + r.a.ID()
}

// hostOOMKills is the oom_kill count of box A's host memory cgroup (v1,
// as the engine makes it), -1 when unreadable.
func (r *run) hostOOMKills() int64 {
	b, err := os.ReadFile("/sys/fs/cgroup/memory/" + r.hostCgroup(context.Background()) + "/memory.oom_control")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "oom_kill "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err == nil {
				return n
			}
		}
	}
	return -1
}
