package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/mass-dev/mass/daemon/api"
)

// Model is a model a generation registered: generation G trained from
// Parent, its merged weights, tokenizer and adapter, the generation's
// directory and the job that made it.
type Model struct {
	Name      string    `json:"name"`
	G         int       `json:"g"`
	Parent    string    `json:"parent"`
	Weights   string    `json:"weights"`
	Tokenizer string    `json:"tokenizer"`
	Adapter   string    `json:"adapter,omitempty"`
	Dir       string    `json:"dir,omitempty"`
	JobID     string    `json:"job_id,omitempty"`
	Created   time.Time `json:"created"`
}

// PutModel registers m, replacing an entry of the same name made by the
// same job (a resumed generation registers again); an entry of that name
// from another job is api.ErrConflict.
func (s *Store) PutModel(ctx context.Context, m Model) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("register model %s: %w", m.Name, err)
	}
	defer tx.Rollback()
	var job string
	err = tx.QueryRowContext(ctx, `SELECT job_id FROM models WHERE name = ?`, m.Name).Scan(&job)
	switch {
	case err == nil && job != m.JobID:
		return fmt.Errorf("model %s is registered by job %s: %w", m.Name, job, api.ErrConflict)
	case err != nil && !errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("register model %s: %w", m.Name, err)
	}
	_, err = tx.ExecContext(ctx, `INSERT OR REPLACE INTO models (name, g, parent, weights, tokenizer, adapter, dir, job_id, created)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, m.Name, m.G, m.Parent, m.Weights, m.Tokenizer, m.Adapter, m.Dir, m.JobID, nanos(m.Created))
	if err != nil {
		return fmt.Errorf("register model %s: %w", m.Name, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("register model %s: %w", m.Name, err)
	}
	return nil
}

const modelCols = `name, g, parent, weights, tokenizer, adapter, dir, job_id, created`

// GetModel returns one registered model; api.ErrNotFound if absent.
func (s *Store) GetModel(ctx context.Context, name string) (Model, error) {
	m, err := scanModel(s.db.QueryRowContext(ctx, `SELECT `+modelCols+` FROM models WHERE name = ?`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return m, fmt.Errorf("model %s: %w", name, api.ErrNotFound)
	}
	return m, err
}

// Models lists the registered models by generation, then name.
func (s *Store) Models(ctx context.Context) ([]Model, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+modelCols+` FROM models ORDER BY g, name`)
	if err != nil {
		return nil, fmt.Errorf("list models: %w", err)
	}
	defer rows.Close()
	out := []Model{}
	for rows.Next() {
		m, err := scanModel(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

func scanModel(r scanner) (Model, error) {
	var m Model
	var created int64
	err := r.Scan(&m.Name, &m.G, &m.Parent, &m.Weights, &m.Tokenizer, &m.Adapter, &m.Dir, &m.JobID, &created)
	m.Created = fromNanos(created)
	return m, err
}

// RemoveModels unregisters the models job jobID registered as generation
// g (a removed generation's) and returns their names.
func (s *Store) RemoveModels(ctx context.Context, jobID string, g int) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `DELETE FROM models WHERE job_id = ? AND g = ? RETURNING name`, jobID, g)
	if err != nil {
		return nil, fmt.Errorf("unregister generation %d's models: %w", g, err)
	}
	defer rows.Close()
	names := []string{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, fmt.Errorf("unregister generation %d's models: %w", g, err)
		}
		names = append(names, n)
	}
	return names, rows.Err()
}
