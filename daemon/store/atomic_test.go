package store

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/mass-dev/mass/daemon/api"
)

// failEvents makes every insert of an event of type typ fail the way a
// full disk fails a write: inside the statement, after the job row
// changed in the same transaction.
func failEvents(t *testing.T, s *Store, typ string) {
	t.Helper()
	_, err := s.db.Exec(`CREATE TEMP TRIGGER fail_` + typ + ` BEFORE INSERT ON events WHEN NEW.type = '` + typ + `'
		BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END`)
	if err != nil {
		t.Fatal(err)
	}
}

// Defect 4: a submit answered 500 still left its job row, which then ran
// without a queued event.
func TestCreateJobAndEventAreOneTransaction(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "massd.db"))
	s.db.SetMaxOpenConns(1) // the temp trigger lives on one connection
	ctx := context.Background()
	failEvents(t, s, "queued")
	err := s.CreateJob(ctx, api.Job{ID: "j1", Kind: "wait", State: api.StateQueued, Attempt: 1, Created: time.Now()}, EventInput{Type: "queued"})
	if err == nil {
		t.Fatal("CreateJob succeeded although its event could not be written")
	}
	if j, err := s.Job(ctx, "j1"); err == nil {
		t.Fatalf("job row left behind: %+v", j)
	}
}

// Defect 8: Claim moved the row to running and "started" was appended
// later, so a kill between them left an attempt without a started event.
func TestClaimWritesStartedInItsTransaction(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "massd.db"))
	s.db.SetMaxOpenConns(1)
	ctx := context.Background()
	now := time.Now()
	for _, id := range []string{"a", "b"} {
		if err := s.CreateJob(ctx, api.Job{ID: id, Kind: "wait", State: api.StateQueued, Attempt: 1, Created: now}, EventInput{Type: "queued"}); err != nil {
			t.Fatal(err)
		}
	}
	if ok, err := s.Claim(ctx, "a", now, EventInput{Type: "started", Fields: map[string]any{"attempt": 1}}); !ok || err != nil {
		t.Fatalf("Claim = %v, %v", ok, err)
	}
	evs, err := s.Events(ctx, "a", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || evs[1].Type != "started" || evs[1].Seq != 2 {
		t.Fatalf("events after Claim = %+v, want queued, started", evs)
	}

	failEvents(t, s, "started")
	if ok, err := s.Claim(ctx, "b", now, EventInput{Type: "started"}); ok || err == nil {
		t.Fatalf("Claim = %v, %v; want an error when started cannot be written", ok, err)
	}
	if j, err := s.Job(ctx, "b"); err != nil || j.State != api.StateQueued || j.LastSeq != 1 {
		t.Fatalf("job b after a failed claim = %+v, %v; want still queued with one event", j, err)
	}
}
