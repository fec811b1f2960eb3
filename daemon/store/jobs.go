package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mass-dev/mass/daemon/api"
)

const jobCols = `id, kind, task_id, state, attempt, params, progress, result, error, created, started, finished, last_seq, cancel_requested, work_dir`

func scanJob(r scanner) (api.Job, error) {
	var j api.Job
	var params, progress, result sql.NullString
	var created int64
	var started, finished sql.NullInt64
	var cancel int
	err := r.Scan(&j.ID, &j.Kind, &j.TaskID, &j.State, &j.Attempt, &params, &progress, &result,
		&j.Error, &created, &started, &finished, &j.LastSeq, &cancel, &j.WorkDir)
	if err != nil {
		return j, err
	}
	if params.Valid && params.String != "" {
		j.Params = json.RawMessage(params.String)
	}
	if result.Valid && result.String != "" {
		j.Result = json.RawMessage(result.String)
	}
	if progress.Valid && progress.String != "" {
		var p api.Progress
		if err := json.Unmarshal([]byte(progress.String), &p); err == nil {
			j.Progress = &p
		}
	}
	j.Created, j.Started, j.Finished = fromNanos(created), optTime(started), optTime(finished)
	j.CancelAsk = cancel != 0
	return j, nil
}

func nullRaw(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}

// CreateJob inserts a queued job and its first event (ev, normally
// "queued") in one transaction: a job whose event cannot be written (a
// full disk) is not created either.
func (s *Store) CreateJob(ctx context.Context, j api.Job, ev EventInput) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO jobs (id, kind, task_id, state, attempt, params, created, work_dir) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			j.ID, j.Kind, j.TaskID, j.State, j.Attempt, nullRaw(j.Params), nanos(j.Created), j.WorkDir); err != nil {
			return err
		}
		_, err := appendEventTx(ctx, tx, j.ID, ev.Type, ev.Message, ev.Fields, j.Created)
		return err
	})
	if err != nil && isDuplicate(err) {
		return fmt.Errorf("job %s already exists: %w", j.ID, api.ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("insert job %s: %w", j.ID, err)
	}
	return nil
}

// Job returns one job; api.ErrNotFound if absent.
func (s *Store) Job(ctx context.Context, id string) (api.Job, error) {
	j, err := scanJob(s.db.QueryRowContext(ctx, `SELECT `+jobCols+` FROM jobs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return j, fmt.Errorf("job %s: %w", id, api.ErrNotFound)
	}
	if err != nil {
		return j, fmt.Errorf("read job %s: %w", id, err)
	}
	return j, nil
}

// JobFilter selects jobs; zero fields match everything.
type JobFilter struct {
	State  string
	Kind   string
	TaskID string
	Limit  int // default DefaultListLimit
}

// Jobs lists jobs matching f, newest first.
func (s *Store) Jobs(ctx context.Context, f JobFilter) ([]api.Job, error) {
	q, args := listQuery(`SELECT `+jobCols+` FROM jobs`,
		[]match{{"state", f.State}, {"kind", f.Kind}, {"task_id", f.TaskID}}, f.Limit)
	return s.queryJobs(ctx, q, args...)
}

func (s *Store) queryJobs(ctx context.Context, q string, args ...any) ([]api.Job, error) {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	defer rows.Close()
	out := []api.Job{}
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, fmt.Errorf("list jobs: %w", err)
		}
		out = append(out, j)
	}
	return out, rows.Err()
}

// Queued lists queued jobs in dispatch order: fewest attempts first, then
// oldest, so a job that keeps being interrupted does not stay in front.
func (s *Store) Queued(ctx context.Context, limit int) ([]api.Job, error) {
	return s.queryJobs(ctx, `SELECT `+jobCols+` FROM jobs WHERE state = ? ORDER BY attempt, created, id LIMIT ?`, api.StateQueued, limit)
}

// Claim moves a queued job to running and appends ev (its "started"
// event) in the same transaction, so no attempt runs without one; false
// (and nothing written) if the job was no longer queued.
func (s *Store) Claim(ctx context.Context, id string, now time.Time, ev EventInput) (bool, error) {
	ok := false
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE jobs SET state = ?, started = ?, finished = NULL, error = '' WHERE id = ? AND state = ?`,
			api.StateRunning, nanos(now), id, api.StateQueued)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return nil
		}
		ok = true
		_, err = appendEventTx(ctx, tx, id, ev.Type, ev.Message, ev.Fields, now)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("claim job %s: %w", id, err)
	}
	return ok, nil
}

// Finish moves a running job to a final state and appends ev in the same
// transaction. needsRecovery marks an interrupted job for the restart logic.
// It returns false (and writes nothing) if the job was not running.
func (s *Store) Finish(ctx context.Context, id, state, errMsg string, now time.Time, needsRecovery bool, ev EventInput) (api.Event, bool, error) {
	rec := 0
	if needsRecovery {
		rec = 1
	}
	var out api.Event
	var ok bool
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE jobs SET state = ?, error = ?, finished = ?, needs_recovery = ? WHERE id = ? AND state = ?`,
			state, errMsg, nanos(now), rec, id, api.StateRunning)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return nil
		}
		ok = true
		out, err = appendEventTx(ctx, tx, id, ev.Type, ev.Message, ev.Fields, now)
		return err
	})
	if err != nil {
		return out, false, fmt.Errorf("finish job %s: %w", id, err)
	}
	return out, ok, nil
}

// CancelQueued cancels a job that is not running (queued, or interrupted
// and waiting) and appends ev in the same transaction; false if the job was
// in another state.
func (s *Store) CancelQueued(ctx context.Context, id string, now time.Time, ev EventInput) (bool, error) {
	var ok bool
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE jobs SET state = ?, finished = ?, cancel_requested = 1, needs_recovery = 0 WHERE id = ? AND state IN (?, ?)`,
			api.StateCancelled, nanos(now), id, api.StateQueued, api.StateInterrupted)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return nil
		}
		ok = true
		_, err = appendEventTx(ctx, tx, id, ev.Type, ev.Message, ev.Fields, now)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("cancel job %s: %w", id, err)
	}
	return ok, nil
}

// RequestCancel records that a running job was asked to stop.
func (s *Store) RequestCancel(ctx context.Context, id string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE jobs SET cancel_requested = 1 WHERE id = ?`, id)
	return err
}

// SetProgress stores a job's live progress document.
func (s *Store) SetProgress(ctx context.Context, id string, p api.Progress) error {
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	_, err = s.db.ExecContext(ctx, `UPDATE jobs SET progress = ? WHERE id = ?`, string(b), id)
	return err
}

// SetResult stores a job's result document.
func (s *Store) SetResult(ctx context.Context, id string, result json.RawMessage) error {
	_, err := s.db.ExecContext(ctx, `UPDATE jobs SET result = ? WHERE id = ?`, nullRaw(result), id)
	return err
}

// InterruptRunning marks every job left "running" (the daemon died) as
// interrupted and due for recovery, each with an "interrupted" event, and
// returns them.
func (s *Store) InterruptRunning(ctx context.Context, now time.Time, reason string) ([]api.Job, error) {
	jobs, err := s.queryJobs(ctx, `SELECT `+jobCols+` FROM jobs WHERE state = ? ORDER BY created, id`, api.StateRunning)
	if err != nil {
		return nil, err
	}
	for _, j := range jobs {
		ev := EventInput{Type: "interrupted", Message: reason, Fields: map[string]any{"attempt": j.Attempt}}
		if _, _, err := s.Finish(ctx, j.ID, api.StateInterrupted, reason, now, true, ev); err != nil {
			return nil, err
		}
	}
	return jobs, nil
}

// PendingRecovery lists interrupted jobs not yet requeued or settled.
func (s *Store) PendingRecovery(ctx context.Context) ([]api.Job, error) {
	return s.queryJobs(ctx, `SELECT `+jobCols+` FROM jobs WHERE state = ? AND needs_recovery = 1 ORDER BY created, id`, api.StateInterrupted)
}

// Requeue puts an interrupted job back in the queue as its next attempt
// and appends ev (with "attempt" added) in the same transaction.
func (s *Store) Requeue(ctx context.Context, id string, now time.Time, ev EventInput) (int, error) {
	return s.RequeueFrom(ctx, id, []string{api.StateInterrupted}, now, ev)
}

// RequeueFrom is Requeue for a job in any of the given states; a job in
// another state is api.ErrConflict.
func (s *Store) RequeueFrom(ctx context.Context, id string, from []string, now time.Time, ev EventInput) (int, error) {
	var attempt int
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		q := `UPDATE jobs SET state = ?, attempt = attempt + 1, needs_recovery = 0, cancel_requested = 0, finished = NULL, error = ''
			WHERE id = ? AND state IN (?` + strings.Repeat(", ?", len(from)-1) + `) RETURNING attempt`
		args := []any{api.StateQueued, id}
		for _, st := range from {
			args = append(args, st)
		}
		err := tx.QueryRowContext(ctx, q, args...).Scan(&attempt)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("not %s: %w", strings.Join(from, " or "), api.ErrConflict)
		}
		if err != nil {
			return err
		}
		if ev.Fields == nil {
			ev.Fields = map[string]any{}
		}
		ev.Fields["attempt"] = attempt
		_, err = appendEventTx(ctx, tx, id, ev.Type, ev.Message, ev.Fields, now)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("requeue job %s: %w", id, err)
	}
	return attempt, nil
}

// Settle marks an interrupted job as needing no further recovery and
// appends ev in the same transaction.
func (s *Store) Settle(ctx context.Context, id string, now time.Time, ev EventInput) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE jobs SET needs_recovery = 0 WHERE id = ?`, id); err != nil {
			return err
		}
		_, err := appendEventTx(ctx, tx, id, ev.Type, ev.Message, ev.Fields, now)
		return err
	})
}

// CountByState counts jobs per state (every state present, zeros included).
func (s *Store) CountByState(ctx context.Context) (map[string]int, error) {
	out := map[string]int{}
	for _, st := range api.States {
		out[st] = 0
	}
	rows, err := s.db.QueryContext(ctx, `SELECT state, COUNT(*) FROM jobs GROUP BY state`)
	if err != nil {
		return nil, fmt.Errorf("count jobs: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var st string
		var n int
		if err := rows.Scan(&st, &n); err != nil {
			return nil, err
		}
		out[st] = n
	}
	return out, rows.Err()
}
