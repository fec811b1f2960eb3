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

// AttemptProgress measures what a job's attempt that started at since got
// done: episodes of the job, or of its sub-jobs (ids "<job>-…", a cycle's
// searches), started since then that reached their own end (any status but
// running or interrupted), and the stage events of type stageEvent it
// recorded since then (none when stageEvent is empty).
func (s *Store) AttemptProgress(ctx context.Context, jobID string, since time.Time, stageEvent string) (episodes, stages int, err error) {
	err = s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM episodes WHERE (job_id = ? OR job_id LIKE ? ESCAPE '\')
		AND created >= ? AND status NOT IN (?, ?)`,
		jobID, likePrefix(jobID)+"-%", nanos(since), api.StateRunning, api.StateInterrupted).Scan(&episodes)
	if err != nil {
		return 0, 0, fmt.Errorf("progress of job %s: %w", jobID, err)
	}
	if stageEvent == "" {
		return episodes, 0, nil
	}
	err = s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM events WHERE job_id = ? AND ts >= ? AND type = ?`,
		jobID, nanos(since), stageEvent).Scan(&stages)
	if err != nil {
		return 0, 0, fmt.Errorf("progress of job %s: %w", jobID, err)
	}
	return episodes, stages, nil
}

// likePrefix escapes LIKE's wildcards in s.
func likePrefix(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '%' || c == '_' || c == '\\' {
			out = append(out, '\\')
		}
		out = append(out, s[i])
	}
	return string(out)
}

// LastEvent is the job's latest event of type typ; ok is false when it has
// none.
func (s *Store) LastEvent(ctx context.Context, jobID, typ string) (ev api.Event, ok bool, err error) {
	var ts int64
	var fields sql.NullString
	err = s.db.QueryRowContext(ctx, `SELECT seq, ts, type, msg, fields FROM events WHERE job_id = ? AND type = ? ORDER BY seq DESC LIMIT 1`,
		jobID, typ).Scan(&ev.Seq, &ts, &ev.Type, &ev.Message, &fields)
	if errors.Is(err, sql.ErrNoRows) {
		return ev, false, nil
	}
	if err != nil {
		return ev, false, fmt.Errorf("last %s event of job %s: %w", typ, jobID, err)
	}
	ev.JobID, ev.Time = jobID, fromNanos(ts)
	if fields.Valid && fields.String != "" {
		if err := json.Unmarshal([]byte(fields.String), &ev.Fields); err != nil {
			return ev, false, fmt.Errorf("last %s event of job %s: %w", typ, jobID, err)
		}
	}
	return ev, true, nil
}
