package jobs

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/store"
	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/jobkind"
)

// Defect 4: when the end of a job could not be written (disk full) the job
// stayed running until a restart. Here the store refuses the succeeded
// event, as a full disk does; once the write works again the job must
// reach succeeded without a restart.
func TestFinishRetriesUntilTheWriteSucceeds(t *testing.T) {
	e := newEnv(t)
	db, err := sql.Open("sqlite", "file:"+filepath.Join(e.dir, "massd.db")+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TRIGGER full_disk BEFORE INSERT ON events WHEN NEW.type = 'succeeded'
		BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END`); err != nil {
		t.Fatal(err)
	}
	m := e.manager(t, 1, WaitKind())
	defer m.Close(context.Background())
	j, err := m.Submit(context.Background(), api.JobRequest{Kind: "wait", Params: []byte(`{"seconds":0.05,"interval_ms":10}`)})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	if got, _ := e.store.Job(context.Background(), j.ID); got.State != api.StateRunning {
		t.Fatalf("job is %s while its end cannot be written, want running", got.State)
	}
	if _, err := db.Exec(`DROP TRIGGER full_disk`); err != nil {
		t.Fatal(err)
	}
	awaitState(t, e.store, j.ID, api.StateSucceeded)
	if got := eventTypes(t, e.store, j.ID); !strings.HasSuffix(strings.Join(got, ","), ",succeeded") {
		t.Errorf("events = %v", got)
	}
}

func TestSubmitRefusedOnLowDisk(t *testing.T) {
	e := newEnv(t)
	m, err := NewManager(Options{Store: e.store, Kinds: []jobkind.Kind{WaitKind()}, Layout: datadir.New(e.dir), Logger: slog.New(slog.DiscardHandler), MinFreeBytes: 1 << 62})
	if err != nil {
		t.Fatal(err)
	}
	d, err := m.Disk()
	if err != nil || !d.Low || d.FreeBytes <= 0 {
		t.Fatalf("Disk = %+v, %v; want low with a positive free figure", d, err)
	}
	_, err = m.Submit(context.Background(), api.JobRequest{Kind: "wait"})
	if !errors.Is(err, api.ErrUnavailable) || !strings.Contains(err.Error(), "threshold") {
		t.Fatalf("Submit on a low disk = %v, want ErrUnavailable naming the threshold", err)
	}
	if js, _ := e.store.Jobs(context.Background(), store.JobFilter{}); len(js) != 0 {
		t.Errorf("a job was created: %+v", js)
	}
}
