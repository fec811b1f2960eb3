// Package store keeps massd's durable state in one SQLite file (pure-Go
// driver, WAL journal, numbered schema migrations): tasks, jobs, job
// events, episodes and the models generations registered. Large artifacts
// live as files beside it, not in it.
package store

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"path/filepath"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Store is the daemon's database. Safe for concurrent use.
type Store struct {
	db *sql.DB
}

// migrations are applied in order; each runs once, in its own transaction.
// Never edit a released entry: append a new one.
var migrations = []string{
	1: `
CREATE TABLE tasks (
	id      TEXT PRIMARY KEY,
	created INTEGER NOT NULL,
	dir     TEXT NOT NULL,
	spec    TEXT NOT NULL
);
CREATE TABLE jobs (
	id               TEXT PRIMARY KEY,
	kind             TEXT NOT NULL,
	task_id          TEXT NOT NULL DEFAULT '',
	state            TEXT NOT NULL,
	attempt          INTEGER NOT NULL DEFAULT 1,
	params           TEXT,
	progress         TEXT,
	result           TEXT,
	error            TEXT NOT NULL DEFAULT '',
	created          INTEGER NOT NULL,
	started          INTEGER,
	finished         INTEGER,
	last_seq         INTEGER NOT NULL DEFAULT 0,
	needs_recovery   INTEGER NOT NULL DEFAULT 0,
	cancel_requested INTEGER NOT NULL DEFAULT 0,
	work_dir         TEXT NOT NULL DEFAULT ''
);
CREATE INDEX jobs_by_state ON jobs (state, created);
CREATE TABLE events (
	job_id TEXT NOT NULL,
	seq    INTEGER NOT NULL,
	ts     INTEGER NOT NULL,
	type   TEXT NOT NULL,
	msg    TEXT NOT NULL DEFAULT '',
	fields TEXT,
	PRIMARY KEY (job_id, seq)
) WITHOUT ROWID;
CREATE TABLE episodes (
	id      TEXT PRIMARY KEY,
	job_id  TEXT NOT NULL DEFAULT '',
	task_id TEXT NOT NULL DEFAULT '',
	status  TEXT NOT NULL,
	dir     TEXT NOT NULL DEFAULT '',
	summary TEXT,
	created INTEGER NOT NULL,
	updated INTEGER NOT NULL
);
CREATE INDEX episodes_by_job ON episodes (job_id);
`,
	2: `
CREATE TABLE models (
	name      TEXT PRIMARY KEY,
	g         INTEGER NOT NULL,
	parent    TEXT NOT NULL DEFAULT '',
	weights   TEXT NOT NULL DEFAULT '',
	tokenizer TEXT NOT NULL DEFAULT '',
	adapter   TEXT NOT NULL DEFAULT '',
	dir       TEXT NOT NULL DEFAULT '',
	job_id    TEXT NOT NULL DEFAULT '',
	created   INTEGER NOT NULL
);
`,
}

// dsnParams are the connection settings, applied by the driver to every
// connection it opens.
const dsnParams = "_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)"

// dsn returns a file: URI for the database at path. The path is
// percent-encoded, so '?', '#' and '%' in it stay part of the file name
// rather than starting the parameters, a fragment or an escape; it is made
// absolute because "file://rel/x" would read "rel" as the URI's host.
func dsn(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: dsnParams}
	return u.String(), nil
}

// Open opens (creating if needed) the database at path and migrates it.
func Open(ctx context.Context, path string) (*Store, error) {
	uri, err := dsn(path)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	db, err := sql.Open("sqlite", uri)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	// One connection serializes writers, so sequence numbers are assigned
	// without SQLITE_BUSY races; reads are short.
	db.SetMaxOpenConns(1)
	s := &Store{db: db}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("migrate database %s: %w", path, err)
	}
	return s, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// SchemaVersion is the newest migration applied.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v)
	return v, err
}

func (s *Store) migrate(ctx context.Context) error {
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied INTEGER NOT NULL)`); err != nil {
		return err
	}
	cur, err := s.SchemaVersion(ctx)
	if err != nil {
		return err
	}
	if cur > len(migrations)-1 {
		return fmt.Errorf("database schema version %d is newer than this massd (%d); upgrade massd", cur, len(migrations)-1)
	}
	for v := cur + 1; v < len(migrations); v++ {
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %d: %w", v, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, applied) VALUES (?, ?)`, v, time.Now().UnixNano()); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %d: %w", v, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migration %d: %w", v, err)
		}
	}
	return nil
}

func nanos(t time.Time) int64 { return t.UTC().UnixNano() }

func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }

func optTime(n sql.NullInt64) *time.Time {
	if !n.Valid {
		return nil
	}
	t := fromNanos(n.Int64)
	return &t
}
