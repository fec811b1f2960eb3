package episode

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/mass-dev/mass/sandbox"
)

// live holds the ids of the episodes this process is running; the
// periodic reaper leaves their containers and volumes alone.
var live sync.Map

// gradeSuffix names the workspace an episode's grader runs in.
const gradeSuffix = "-grade"

// GradeWorkspace is the sandbox workspace id of episode id's grader.
func GradeWorkspace(id string) string { return id + gradeSuffix }

// Running reports whether this process is running episode id. A grader's
// workspace (GradeWorkspace) belongs to its episode: while the episode
// runs, the periodic reaper leaves the grade alone.
func Running(id string) bool {
	if _, ok := live.Load(id); ok {
		return true
	}
	ep, ok := strings.CutSuffix(id, gradeSuffix)
	if !ok {
		return false
	}
	_, ok = live.Load(ep)
	return ok
}

// DefaultCleanupBudget bounds how long an episode's end retries removing
// its containers and volumes before leaving them to the periodic reaper.
const DefaultCleanupBudget = 2 * time.Minute

// Backoff between cleanup tries.
var cleanupRetryMin, cleanupRetryMax = 200 * time.Millisecond, 5 * time.Second

// retryCleanup calls fn until it succeeds, ctx ends or budget passes,
// backing off between tries (a Docker engine that went away for a while
// must not leave containers for the daemon's lifetime). It returns fn's
// last error.
func retryCleanup(ctx context.Context, log *slog.Logger, what string, budget time.Duration, fn func(context.Context) error) error {
	if budget <= 0 {
		budget = DefaultCleanupBudget
	}
	deadline := time.Now().Add(budget)
	delay := cleanupRetryMin
	for try := 1; ; try++ {
		err := fn(ctx)
		if err == nil || ctx.Err() != nil || time.Now().Add(delay).After(deadline) {
			return err
		}
		if log != nil {
			log.Warn("sandbox cleanup failed; retrying", "what", what, "try", try, "delay", delay, "err", err)
		}
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return err
		}
		delay = min(2*delay, cleanupRetryMax)
	}
}

// DefaultReapInterval is how often Reap looks for leftovers.
const DefaultReapInterval = time.Minute

// Reap removes, every interval until ctx ends, the containers and volumes
// of this daemon's episodes that no running episode owns: what a cleanup
// left behind while the engine was unreachable. Errors (the engine still
// away) are logged and tried again at the next tick.
func Reap(ctx context.Context, rt sandbox.Runtime, interval time.Duration, log *slog.Logger) {
	if interval <= 0 {
		interval = DefaultReapInterval
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		n, err := rt.ReapOrphans(ctx, Running)
		switch {
		case err != nil && log != nil:
			log.Warn("periodic reap", "removed", n, "err", err)
		case n > 0 && log != nil:
			log.Info("periodic reap removed leftover sandboxes", "objects", n)
		}
	}
}
