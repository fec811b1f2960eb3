package daemon

import (
	"context"
	"sync"
	"time"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/jobkind"
)

// ReapFunc is start-up recovery: it removes the sandboxes a crashed massd
// left and closes the episodes it cut off (their files, store rows and
// events, through rec), telling healthz what it does through stage. It runs
// in the background while the API already answers and before any job
// starts.
type ReapFunc func(ctx context.Context, rec jobkind.Recovery, stage func(name string, episodes int)) error

// Recovery stages in healthz.
const (
	StageReapSandboxes = "reaping sandboxes"
	StageCloseEpisodes = "closing episodes"
)

// recovery is the state of start-up recovery that healthz shows.
type recovery struct {
	mu   sync.Mutex
	cur  *api.Recovery // nil once done
	done chan struct{}
}

func newRecovery() *recovery {
	return &recovery{cur: &api.Recovery{Stage: StageReapSandboxes, Since: time.Now().UTC()}, done: make(chan struct{})}
}

func (r *recovery) stage(name string, episodes int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur != nil {
		r.cur.Stage, r.cur.Episodes = name, episodes
	}
}

// state is what healthz shows: a copy, nil once recovery ended.
func (r *recovery) state() *api.Recovery {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur == nil {
		return nil
	}
	c := *r.cur
	return &c
}

func (r *recovery) finish() {
	r.mu.Lock()
	r.cur = nil
	r.mu.Unlock()
	close(r.done)
}

// startRecovery runs the reaper in the background and releases the job
// manager when it ends, however it ends; Close waits for it.
func (d *Daemon) startRecovery() {
	if d.o.ReapOrphans == nil {
		d.rec.finish()
		d.mgr.Release()
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		defer d.mgr.Release()
		defer d.rec.finish()
		start := time.Now()
		if err := d.o.ReapOrphans(ctx, d.mgr, d.rec.stage); err != nil {
			d.log.Warn("start-up recovery", "err", err)
		}
		d.log.Info("start-up recovery done; jobs start", "took", time.Since(start).Round(time.Millisecond))
	}()
	d.closers = append(d.closers, func() { cancel(); <-d.rec.done })
}
