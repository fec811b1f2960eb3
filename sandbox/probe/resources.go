package probe

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
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
	if err := r.memBomb(ctx, ref.MemoryBytes); err != nil {
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
	rs, _, err := r.exec(ctx, r.a, time.Minute, "burn", "-config", mustJSON(cfg), "-threads", "2", "-for", "2s")
	if err != nil {
		return err
	}
	r.report.add(rs...)
	return nil
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

// memBomb touches memory past the limit and expects an OOM kill with no swap.
func (r *run) memBomb(ctx context.Context, limit int64) error {
	const name = "memory_bomb_oom"
	want := fmt.Sprintf("SIGKILL by the OOM killer at the %d MiB limit, no swap", limit>>20)
	if limit <= 0 {
		r.report.add(check.Result{Name: name, Expected: "a memory limit", Observed: "the reference policy has no memory limit"})
		return nil
	}
	before, err := r.memStat(ctx)
	if err != nil {
		return err
	}
	res, err := r.a.Exec(ctx, sandbox.ExecRequest{Argv: []string{probePath, "membomb", "-max", strconv.FormatInt(limit+4*slack, 10)},
		Timeout: 2 * time.Minute, MaxBytes: check.MaxOutput})
	if err != nil {
		return fmt.Errorf("run memory bomb: %w", err)
	}
	after, err := r.memStat(ctx)
	if err != nil {
		return err
	}
	noSwap := after.SwapBytes == 0 || (after.SwapBytes < 0 && after.HostSwap == 0)
	killed := res.ExitCode == 128+9
	obs := fmt.Sprintf("exit %d, cgroup oom_kill %d -> %d, limit %d MiB, swap allowance %d, host swap %d",
		res.ExitCode, before.OOMKills, after.OOMKills, after.LimitBytes>>20, after.SwapBytes, after.HostSwap)
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
