package agent

import (
	"context"
	"errors"
	"sync"
	"time"
)

// errWallTime is the cause of an agent context ended by the agent's wall time.
var errWallTime = errors.New("agent wall time used up")

// wallClock ends an agent's context once the agent has run for its wall
// time. The clock stops while the agent waits on a sub-agent, which its own
// clock bounds, so that a worker can use its whole wall time and still
// report back. A nil *wallClock (no limit) does nothing.
type wallClock struct {
	limit  time.Duration
	cancel context.CancelCauseFunc

	mu    sync.Mutex
	used  time.Duration // before since
	since time.Time     // when the clock last started; zero while stopped
	timer *time.Timer
}

// startWallClock returns ctx bounded by limit of running time, or ctx
// itself and nil when limit is not positive. Call stop when the agent ends.
func startWallClock(ctx context.Context, limit time.Duration) (context.Context, *wallClock) {
	if limit <= 0 {
		return ctx, nil
	}
	ctx, cancel := context.WithCancelCause(ctx)
	w := &wallClock{limit: limit, cancel: cancel}
	w.resume()
	return ctx, w
}

// pause stops the clock until resume.
func (w *wallClock) pause() {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.since.IsZero() {
		return
	}
	if w.timer.Stop() {
		w.used += time.Since(w.since)
	} else {
		w.used = w.limit // the timer fired
	}
	w.since = time.Time{}
}

// resume starts the clock with what is left of the limit.
func (w *wallClock) resume() {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.since.IsZero() {
		return
	}
	w.since = time.Now()
	w.timer = time.AfterFunc(w.limit-w.used, func() { w.cancel(errWallTime) })
}

// stop releases the clock and its context.
func (w *wallClock) stop() {
	if w == nil {
		return
	}
	w.pause()
	w.cancel(context.Canceled)
}

// ranOut reports whether ctx, as returned by startWallClock, ended because
// the agent used its wall time (not because a parent context ended).
func ranOut(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), errWallTime)
}
