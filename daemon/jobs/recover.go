package jobs

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/store"
	"github.com/mass-dev/mass/jobkind"
)

// MaxAutoAttempts caps the attempts in a row that a job gets from
// automatic requeues after interruptions while it makes no progress;
// past it the job is left interrupted for an operator (massctl job retry,
// which gives a fresh budget). An attempt that made progress (attemptProgress:
// a finished episode or stage) gives the budget back, so a long cycle
// survives any number of crashes that each let it advance, up to
// MaxTotalAttempts. Requeued jobs also queue behind jobs with fewer
// attempts (store.Queued), so repeated crashes are spread over the queue
// instead of hitting the oldest jobs every time.
const MaxAutoAttempts = 3

// MaxTotalAttempts caps every automatic attempt of a job, progress or not.
const MaxTotalAttempts = 20

// recover marks jobs left "running" by a crash as interrupted and applies
// each kind's OnInterrupt policy to every interrupted job not yet handled
// (crashed now, or drained by a graceful shutdown).
func (m *Manager) recover(ctx context.Context) error {
	now := time.Now()
	crashed, err := m.store.InterruptRunning(ctx, now, "massd stopped while the job was running")
	if err != nil {
		return err
	}
	for _, j := range crashed {
		m.log.Warn("job interrupted by a daemon crash", "job", j.ID, "kind", j.Kind, "attempt", j.Attempt)
	}
	pending, err := m.store.PendingRecovery(ctx)
	if err != nil {
		return err
	}
	for _, j := range pending {
		k, ok := m.kinds[j.Kind]
		policy := k.OnInterrupt
		if !ok {
			policy = jobkind.Fail
		}
		b := m.budget(ctx, j)
		capped := policy != jobkind.Fail && (b.stalled >= MaxAutoAttempts || j.Attempt >= MaxTotalAttempts)
		if capped {
			policy = jobkind.Fail
		}
		switch policy {
		case jobkind.Retry, jobkind.Resume:
			if policy == jobkind.Retry {
				m.setAsideWorkDir(j)
			}
			attempt, err := m.store.Requeue(ctx, j.ID, now, store.EventInput{
				Type: "requeued", Message: fmt.Sprintf("queued again after interruption (%s); %s", policy, b),
				Fields: b.fields(map[string]any{"policy": string(policy)}),
			})
			if err != nil {
				return err
			}
			m.log.Info("job requeued", "job", j.ID, "policy", policy, "attempt", attempt)
		default:
			msg := "left interrupted for an operator"
			switch {
			case capped && j.Attempt >= MaxTotalAttempts:
				msg = fmt.Sprintf("left interrupted: attempt %d reached the cap of %d automatic attempts in all; massctl job retry %s", j.Attempt, MaxTotalAttempts, j.ID)
			case capped:
				msg = fmt.Sprintf("left interrupted: %d attempts in a row made no progress (the cap of %d automatic attempts without progress; attempt %d); massctl job retry %s",
					b.stalled, MaxAutoAttempts, j.Attempt, j.ID)
			case !ok:
				msg = fmt.Sprintf("left interrupted: kind %q is not available in this massd", j.Kind)
			}
			if err := m.store.Settle(ctx, j.ID, now, store.EventInput{Type: "settled", Message: msg, Fields: b.fields(nil)}); err != nil {
				return err
			}
		}
	}
	return nil
}

// setAsideWorkDir moves a retried job's work dir to <dir>.attempt-N so the
// next attempt starts from an empty one; the old files stay for inspection.
func (m *Manager) setAsideWorkDir(j api.Job) {
	dir := m.layout.Job(j.ID)
	if _, err := os.Lstat(dir); err != nil {
		return
	}
	if err := os.Rename(dir, fmt.Sprintf("%s.attempt-%d", dir, j.Attempt)); err != nil {
		m.log.Warn("set aside work dir of retried job", "job", j.ID, "err", err)
	}
}

// Retry queues a failed, cancelled or interrupted job again as its next
// attempt, with a fresh work dir (the old one is kept as <dir>.attempt-N).
func (m *Manager) Retry(ctx context.Context, id string) (api.Job, error) {
	j, err := m.store.Job(ctx, id)
	if err != nil {
		return j, err
	}
	if _, ok := m.kinds[j.Kind]; !ok {
		return j, fmt.Errorf("job %s is of kind %q, which this massd does not run: %w", id, j.Kind, api.ErrInvalid)
	}
	switch j.State {
	case api.StateFailed, api.StateCancelled, api.StateInterrupted:
	default:
		return j, fmt.Errorf("job %s is %s; only failed, cancelled or interrupted jobs can be retried: %w", id, j.State, api.ErrConflict)
	}
	m.setAsideWorkDir(j)
	_, err = m.store.RequeueFrom(ctx, id, []string{api.StateFailed, api.StateCancelled, api.StateInterrupted}, time.Now(),
		store.EventInput{Type: "requeued", Message: "retried by an operator", Fields: map[string]any{"policy": "operator"}})
	if err != nil {
		return j, err
	}
	m.hub.notify(id)
	m.poke()
	return m.store.Job(ctx, id)
}
