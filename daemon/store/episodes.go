package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mass-dev/mass/daemon/api"
)

// UpsertEpisode records or updates an episode; created, and fields left
// empty in an update, keep their earlier values.
func (s *Store) UpsertEpisode(ctx context.Context, e api.Episode, now time.Time) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO episodes (id, job_id, task_id, status, dir, summary, created, updated)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET job_id = COALESCE(NULLIF(excluded.job_id, ''), episodes.job_id),
			task_id = COALESCE(NULLIF(excluded.task_id, ''), episodes.task_id), status = excluded.status,
			dir = COALESCE(NULLIF(excluded.dir, ''), episodes.dir), summary = COALESCE(excluded.summary, episodes.summary), updated = excluded.updated`,
		e.ID, e.JobID, e.TaskID, e.Status, e.Dir, nullRaw(e.Summary), nanos(now), nanos(now))
	if err != nil {
		return fmt.Errorf("record episode %s: %w", e.ID, err)
	}
	return nil
}

const episodeCols = `id, job_id, task_id, status, dir, summary, created, updated`

func scanEpisode(r scanner) (api.Episode, error) {
	var e api.Episode
	var summary sql.NullString
	var created, updated int64
	if err := r.Scan(&e.ID, &e.JobID, &e.TaskID, &e.Status, &e.Dir, &summary, &created, &updated); err != nil {
		return e, err
	}
	if summary.Valid && summary.String != "" {
		e.Summary = []byte(summary.String)
	}
	e.Created, e.Updated = fromNanos(created), fromNanos(updated)
	return e, nil
}

// Episode returns one episode; api.ErrNotFound if absent.
func (s *Store) Episode(ctx context.Context, id string) (api.Episode, error) {
	e, err := scanEpisode(s.db.QueryRowContext(ctx, `SELECT `+episodeCols+` FROM episodes WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return e, fmt.Errorf("episode %s: %w", id, api.ErrNotFound)
	}
	return e, err
}

// EpisodeFilter selects episodes; zero fields match everything.
type EpisodeFilter struct {
	JobID  string
	TaskID string
	Status string
	Limit  int // default DefaultListLimit
}

// Episodes lists episodes matching f, newest first.
func (s *Store) Episodes(ctx context.Context, f EpisodeFilter) ([]api.Episode, error) {
	q, args := listQuery(`SELECT `+episodeCols+` FROM episodes`,
		[]match{{"job_id", f.JobID}, {"task_id", f.TaskID}, {"status", f.Status}}, f.Limit)
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list episodes: %w", err)
	}
	defer rows.Close()
	out := []api.Episode{}
	for rows.Next() {
		e, err := scanEpisode(rows)
		if err != nil {
			return nil, fmt.Errorf("list episodes: %w", err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// DeleteEpisode removes an episode's row; api.ErrNotFound if absent.
func (s *Store) DeleteEpisode(ctx context.Context, id string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM episodes WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("delete episode %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("episode %s: %w", id, api.ErrNotFound)
	}
	return nil
}

// CloseEpisode ends the row of an episode a crash cut off: in one
// transaction, if the row is still "running", it takes e's status and
// summary and, when ev has a type, ev is appended to the row's job (for a
// sub-job's row, "<job>-…", to the job it runs in). An absent row or one
// that already ended is left alone, so closing twice changes nothing. It
// reports whether it changed the row.
func (s *Store) CloseEpisode(ctx context.Context, e api.Episode, ev EventInput, now time.Time) (bool, error) {
	changed := false
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var jobID string
		err := tx.QueryRowContext(ctx, `UPDATE episodes SET status = ?, summary = COALESCE(?, summary), updated = ?
			WHERE id = ? AND status = ? RETURNING job_id`,
			e.Status, nullRaw(e.Summary), nanos(now), e.ID, api.StateRunning).Scan(&jobID)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		changed = true
		if ev.Type == "" || jobID == "" {
			return nil
		}
		// A sub-job's episode (a cycle's search, "<job>-g1-0") reports to
		// the job it runs in.
		for owner := jobID; ; {
			_, err = appendEventTx(ctx, tx, owner, ev.Type, ev.Message, ev.Fields, now)
			i := strings.LastIndexByte(owner, '-')
			if !errors.Is(err, api.ErrNotFound) || i < 0 {
				break
			}
			owner = owner[:i]
		}
		if errors.Is(err, api.ErrNotFound) {
			return nil // its job was removed; the row still ends
		}
		return err
	})
	if err != nil {
		return false, fmt.Errorf("close episode %s: %w", e.ID, err)
	}
	return changed, nil
}
