package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mass-dev/mass/daemon/api"
)

// AppendEvent appends an event to a job's stream. The job's counter and the
// event row change in one transaction, so a sequence number is never reused
// or skipped, even across crashes.
func (s *Store) AppendEvent(ctx context.Context, jobID, typ, msg string, fields map[string]any, now time.Time) (api.Event, error) {
	var ev api.Event
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		ev, err = appendEventTx(ctx, tx, jobID, typ, msg, fields, now)
		return err
	})
	if err != nil {
		return ev, fmt.Errorf("append event to %s: %w", jobID, err)
	}
	return ev, nil
}

func appendEventTx(ctx context.Context, tx *sql.Tx, jobID, typ, msg string, fields map[string]any, now time.Time) (api.Event, error) {
	ev := api.Event{JobID: jobID, Time: now.UTC(), Type: typ, Message: msg, Fields: fields}
	var raw any
	if len(fields) > 0 {
		b, err := json.Marshal(fields)
		if err != nil {
			return ev, fmt.Errorf("encode event fields: %w", err)
		}
		raw = string(b)
	}
	if err := tx.QueryRowContext(ctx, `UPDATE jobs SET last_seq = last_seq + 1 WHERE id = ? RETURNING last_seq`, jobID).Scan(&ev.Seq); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return ev, fmt.Errorf("job %s: %w", jobID, api.ErrNotFound)
		}
		return ev, err
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO events (job_id, seq, ts, type, msg, fields) VALUES (?, ?, ?, ?, ?, ?)`,
		jobID, ev.Seq, nanos(now), typ, msg, raw)
	return ev, err
}

func (s *Store) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// EventInput is an event written together with a state change.
type EventInput struct {
	Type    string
	Message string
	Fields  map[string]any
}

// Events returns a job's events with seq > after, in order, at most limit.
func (s *Store) Events(ctx context.Context, jobID string, after int64, limit int) ([]api.Event, error) {
	if limit <= 0 {
		limit = 10000
	}
	rows, err := s.db.QueryContext(ctx, `SELECT seq, ts, type, msg, fields FROM events WHERE job_id = ? AND seq > ? ORDER BY seq LIMIT ?`,
		jobID, after, limit)
	if err != nil {
		return nil, fmt.Errorf("read events of %s: %w", jobID, err)
	}
	defer rows.Close()
	out := []api.Event{}
	for rows.Next() {
		ev := api.Event{JobID: jobID}
		var ts int64
		var fields sql.NullString
		if err := rows.Scan(&ev.Seq, &ts, &ev.Type, &ev.Message, &fields); err != nil {
			return nil, fmt.Errorf("read events of %s: %w", jobID, err)
		}
		ev.Time = fromNanos(ts)
		if fields.Valid {
			if err := json.Unmarshal([]byte(fields.String), &ev.Fields); err != nil {
				return nil, fmt.Errorf("decode event %s/%d: %w", jobID, ev.Seq, err)
			}
		}
		out = append(out, ev)
	}
	return out, rows.Err()
}
