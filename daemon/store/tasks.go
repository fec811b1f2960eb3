package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mass-dev/mass/daemon/api"
)

// CreateTask inserts a task; api.ErrConflict if the id exists.
func (s *Store) CreateTask(ctx context.Context, t api.Task) error {
	spec, err := json.Marshal(t.Spec)
	if err != nil {
		return fmt.Errorf("encode task %s: %w", t.ID, err)
	}
	_, err = s.db.ExecContext(ctx, `INSERT INTO tasks (id, created, dir, spec) VALUES (?, ?, ?, ?)`,
		t.ID, nanos(t.Created), t.Dir, string(spec))
	if err != nil && isDuplicate(err) {
		return fmt.Errorf("task %s already exists: %w", t.ID, api.ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("insert task %s: %w", t.ID, err)
	}
	return nil
}

// Task returns one task; api.ErrNotFound if absent.
func (s *Store) Task(ctx context.Context, id string) (api.Task, error) {
	row := s.db.QueryRowContext(ctx, `SELECT id, created, dir, spec FROM tasks WHERE id = ?`, id)
	t, err := scanTask(row)
	if errors.Is(err, sql.ErrNoRows) {
		return t, fmt.Errorf("task %s: %w", id, api.ErrNotFound)
	}
	return t, err
}

// Tasks lists every task, oldest first.
func (s *Store) Tasks(ctx context.Context) ([]api.Task, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, created, dir, spec FROM tasks ORDER BY created, id`)
	if err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	defer rows.Close()
	out := []api.Task{}
	for rows.Next() {
		t, err := scanTask(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

type scanner interface{ Scan(...any) error }

func scanTask(r scanner) (api.Task, error) {
	var t api.Task
	var created int64
	var spec string
	if err := r.Scan(&t.ID, &created, &t.Dir, &spec); err != nil {
		return t, err
	}
	t.Created = fromNanos(created)
	if err := json.Unmarshal([]byte(spec), &t.Spec); err != nil {
		return t, fmt.Errorf("decode task %s: %w", t.ID, err)
	}
	return t, nil
}

// UpdateTask replaces a task's spec and directory; api.ErrNotFound if absent.
func (s *Store) UpdateTask(ctx context.Context, t api.Task) error {
	spec, err := json.Marshal(t.Spec)
	if err != nil {
		return fmt.Errorf("encode task %s: %w", t.ID, err)
	}
	res, err := s.db.ExecContext(ctx, `UPDATE tasks SET dir = ?, spec = ? WHERE id = ?`, t.Dir, string(spec), t.ID)
	if err != nil {
		return fmt.Errorf("update task %s: %w", t.ID, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("task %s: %w", t.ID, api.ErrNotFound)
	}
	return nil
}

// DeleteTask removes a task's row; api.ErrNotFound if absent. Jobs and
// episodes that name it keep their rows.
func (s *Store) DeleteTask(ctx context.Context, id string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM tasks WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("delete task %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("task %s: %w", id, api.ErrNotFound)
	}
	return nil
}
