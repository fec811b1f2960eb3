package docker

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mass-dev/mass/sandbox"
)

// Disk modes: how the workspace cap is enforced.
const (
	// DiskTmpfs makes the workspace a tmpfs volume of the cap's size; the
	// kernel enforces it. Its pages live in memory.
	DiskTmpfs = "tmpfs"
	// DiskMonitor keeps the workspace on the engine's disk and measures it
	// every MonitorInterval from the keeper; an episode over its cap has its
	// agent containers killed. Writes can overshoot by what an agent writes
	// within one interval.
	DiskMonitor = "monitor"
)

// DefaultMonitorInterval is how often DiskMonitor measures a workspace.
const DefaultMonitorInterval = 2 * time.Second

func diskCapDescription(mode string, p sandbox.Policy, every time.Duration) string {
	switch {
	case p.DiskBytes <= 0:
		return "not enforced (disk_bytes 0)"
	case mode == DiskMonitor:
		return fmt.Sprintf("monitored: workspace usage measured every %s; an episode over %d bytes has its agents killed", every, p.DiskBytes)
	}
	return fmt.Sprintf("tmpfs volume size=%d bytes (kernel-enforced, writes fail with ENOSPC; pages count toward host memory)", p.DiskBytes)
}

// Usage returns the bytes the episode's workspace occupies, measured inside
// its keeper without following links.
func (r *Runtime) Usage(ctx context.Context, episode string) (int64, error) {
	res, err := r.execRaw(ctx, keeperName(episode), execOpts{argv: []string{HelperMount, "du"}, user: "0", maxBytes: 256, hostTimeout: time.Minute})
	if err != nil {
		return 0, fmt.Errorf("workspace usage of %s: %w", episode, err)
	}
	n, perr := strconv.ParseInt(strings.TrimSpace(string(res.Stdout)), 10, 64)
	if res.ExitCode != 0 || perr != nil {
		return 0, fmt.Errorf("workspace usage of %s: helper du exited %d with output %q: %s", episode, res.ExitCode, res.Stdout, bytes.TrimSpace(res.Stderr))
	}
	return n, nil
}

// monitor watches one workspace until ctx ends.
func (r *Runtime) monitor(ctx context.Context, episode string, capBytes int64) {
	defer r.wg.Done()
	t := time.NewTicker(r.cfg.MonitorInterval)
	defer t.Stop()
	log := r.log.With("episode", episode)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		n, err := r.Usage(ctx, episode)
		if err != nil {
			if ctx.Err() == nil {
				log.Debug("measure workspace", "err", err)
			}
			continue
		}
		if n > capBytes {
			log.Warn("workspace over its disk cap; killing the episode's agents", "bytes", n, "cap", capBytes)
			r.mu.Lock()
			r.overCap[episode] = true
			r.mu.Unlock()
			if err := r.KillEpisode(context.WithoutCancel(ctx), episode); err != nil {
				log.Error("kill episode over its disk cap", "err", err)
			}
		}
	}
}

// OverCap reports whether the monitor found the episode over its disk cap.
func (r *Runtime) OverCap(episode string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.overCap[episode]
}

func (r *Runtime) startMonitor(episode string, capBytes int64) {
	ctx, cancel := context.WithCancel(r.ctx)
	r.mu.Lock()
	r.monitors[episode] = cancel
	r.mu.Unlock()
	r.wg.Add(1)
	go r.monitor(ctx, episode, capBytes)
}

func (r *Runtime) stopMonitor(episode string) {
	r.mu.Lock()
	cancel := r.monitors[episode]
	delete(r.monitors, episode)
	delete(r.overCap, episode)
	r.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}
