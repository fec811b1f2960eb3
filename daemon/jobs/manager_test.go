package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/store"
	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/jobkind"
	"github.com/mass-dev/mass/taskspec"
)

type env struct {
	dir   string
	store *store.Store
}

func newEnv(t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	s, err := store.Open(context.Background(), filepath.Join(dir, "massd.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return &env{dir: dir, store: s}
}

func (e *env) manager(t *testing.T, conc int, kinds ...jobkind.Kind) *Manager {
	t.Helper()
	m, err := NewManager(Options{Store: e.store, Kinds: kinds, Concurrency: conc, Layout: datadir.New(e.dir), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return m
}

func awaitState(t *testing.T, s *store.Store, id string, want ...string) api.Job {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		j, err := s.Job(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if j.State == w {
				return j
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s is %s, want one of %v", id, j.State, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func eventTypes(t *testing.T, s *store.Store, id string) []string {
	t.Helper()
	evs, err := s.Events(context.Background(), id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i, ev := range evs {
		if ev.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d", i, ev.Seq)
		}
		out = append(out, ev.Type)
	}
	return out
}

func submit(t *testing.T, m *Manager, kind string, params string) api.Job {
	t.Helper()
	j, err := m.Submit(context.Background(), api.JobRequest{Kind: kind, Params: json.RawMessage(params)})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func TestWaitSucceeds(t *testing.T) {
	e := newEnv(t)
	m := e.manager(t, 2, WaitKind())
	defer m.Close(context.Background())
	j := submit(t, m, "wait", `{"seconds":0.2,"interval_ms":50}`)
	got := awaitState(t, e.store, j.ID, api.StateSucceeded, api.StateFailed)
	if got.State != api.StateSucceeded {
		t.Fatalf("state = %s (%s)", got.State, got.Error)
	}
	types := eventTypes(t, e.store, j.ID)
	want := []string{"queued", "started", "tick", "tick", "tick", "tick", "succeeded"}
	if len(types) != len(want) {
		t.Fatalf("events = %v, want %v", types, want)
	}
	for i := range want {
		if types[i] != want[i] {
			t.Errorf("event %d = %s, want %s", i, types[i], want[i])
		}
	}
	if got.Progress == nil || got.Progress.Counters["tick"] != 4 {
		t.Errorf("progress = %+v, want tick 4", got.Progress)
	}
	if string(got.Result) != `{"attempts":1,"ticks":4}` {
		t.Errorf("result = %s", got.Result)
	}
}

func TestSubmitRejects(t *testing.T) {
	e := newEnv(t)
	m := e.manager(t, 1, WaitKind())
	defer m.Close(context.Background())
	tests := []struct {
		name string
		req  api.JobRequest
		want error
	}{
		{"unknown kind", api.JobRequest{Kind: "nope"}, api.ErrInvalid},
		{"params not object", api.JobRequest{Kind: "wait", Params: json.RawMessage(`[1]`)}, api.ErrInvalid},
		{"bad wait params", api.JobRequest{Kind: "wait", Params: json.RawMessage(`{"seconds":-1}`)}, api.ErrInvalid},
		{"unknown param", api.JobRequest{Kind: "wait", Params: json.RawMessage(`{"secs":1}`)}, api.ErrInvalid},
		{"unknown task", api.JobRequest{Kind: "wait", TaskID: "ghost"}, api.ErrInvalid},
	}
	for _, tt := range tests {
		if _, err := m.Submit(context.Background(), tt.req); !errors.Is(err, tt.want) {
			t.Errorf("%s: err = %v, want %v", tt.name, err, tt.want)
		}
	}
}

func TestCancel(t *testing.T) {
	e := newEnv(t)
	m := e.manager(t, 1, WaitKind())
	defer m.Close(context.Background())
	running := submit(t, m, "wait", `{"seconds":60,"interval_ms":20}`)
	queued := submit(t, m, "wait", `{"seconds":1}`)
	awaitState(t, e.store, running.ID, api.StateRunning)
	if _, err := m.Cancel(context.Background(), queued.ID); err != nil {
		t.Fatal(err)
	}
	if got := awaitState(t, e.store, queued.ID, api.StateCancelled, api.StateRunning); got.State != api.StateCancelled {
		t.Fatalf("queued job is %s", got.State)
	}
	if _, err := m.Cancel(context.Background(), running.ID); err != nil {
		t.Fatal(err)
	}
	awaitState(t, e.store, running.ID, api.StateCancelled)
	if _, err := m.Cancel(context.Background(), running.ID); !errors.Is(err, api.ErrConflict) {
		t.Errorf("second cancel = %v, want ErrConflict", err)
	}
}

func TestConcurrencyBound(t *testing.T) {
	e := newEnv(t)
	var cur, peak atomic.Int32
	k := jobkind.Kind{Name: "busy", OnInterrupt: jobkind.Fail, Run: func(ctx context.Context, job jobkind.Job, rep jobkind.Reporter) error {
		n := cur.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(30 * time.Millisecond)
		cur.Add(-1)
		return nil
	}}
	m := e.manager(t, 2, k)
	defer m.Close(context.Background())
	var ids []string
	for i := 0; i < 6; i++ {
		ids = append(ids, submit(t, m, "busy", "").ID)
	}
	for _, id := range ids {
		awaitState(t, e.store, id, api.StateSucceeded)
	}
	if got, want := peak.Load(), int32(2); got != want {
		t.Errorf("peak concurrency = %d, want %d", got, want)
	}
}

func TestPanicAndErrorFail(t *testing.T) {
	e := newEnv(t)
	m := e.manager(t, 2,
		jobkind.Kind{Name: "boom", Run: func(context.Context, jobkind.Job, jobkind.Reporter) error { panic("kaboom") }},
		jobkind.Kind{Name: "err", Run: func(context.Context, jobkind.Job, jobkind.Reporter) error { return errors.New("no luck") }},
	)
	defer m.Close(context.Background())
	for kind, want := range map[string]string{"boom": "panicked: kaboom", "err": "no luck"} {
		j := awaitState(t, e.store, submit(t, m, kind, "").ID, api.StateFailed)
		if got := j.Error; len(got) < len(want) || got[len(got)-len(want):] != want {
			t.Errorf("%s: error = %q, want suffix %q", kind, got, want)
		}
	}
}

func TestDrainThenResume(t *testing.T) {
	e := newEnv(t)
	m := e.manager(t, 1, WaitKind())
	j := submit(t, m, "wait", `{"seconds":0.6,"interval_ms":30}`)
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, _ := e.store.Job(context.Background(), j.ID)
		if got.Progress != nil && got.Progress.Counters["tick"] >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no progress")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := m.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := awaitState(t, e.store, j.ID, api.StateInterrupted); got.Attempt != 1 {
		t.Errorf("attempt = %d", got.Attempt)
	}
	m2 := e.manager(t, 1, WaitKind())
	defer m2.Close(context.Background())
	got := awaitState(t, e.store, j.ID, api.StateSucceeded)
	if got.Attempt != 2 {
		t.Errorf("attempt = %d, want 2", got.Attempt)
	}
	evs, err := e.store.Events(context.Background(), j.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	ticks := map[float64]int{}
	var sawResumed bool
	for _, ev := range evs {
		if ev.Type == "tick" {
			ticks[ev.Fields["tick"].(float64)]++
		}
		sawResumed = sawResumed || ev.Type == "resumed"
	}
	if !sawResumed {
		t.Error("no resumed event")
	}
	if got, want := len(ticks), 20; got != want {
		t.Errorf("distinct ticks = %d, want %d", got, want)
	}
	for tick, n := range ticks {
		if n != 1 {
			t.Errorf("tick %v reported %d times", tick, n)
		}
	}
}

func TestReporterEpisode(t *testing.T) {
	e := newEnv(t)
	k := jobkind.Kind{Name: "episodic", Run: func(ctx context.Context, job jobkind.Job, rep jobkind.Reporter) error {
		rep.Episode(jobkind.EpisodeRecord{ID: "ep-a", TaskID: "t", Status: "running", Dir: job.Layout.Episode("ep-a")})
		rep.Episode(jobkind.EpisodeRecord{ID: "ep-a", TaskID: "t", Status: "completed", Summary: map[string]any{"success": true}})
		return nil
	}}
	m := e.manager(t, 1, k)
	defer m.Close(context.Background())
	j := submit(t, m, "episodic", "")
	awaitState(t, e.store, j.ID, api.StateSucceeded)
	eps, err := e.store.Episodes(context.Background(), store.EpisodeFilter{JobID: j.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(eps) != 1 {
		t.Fatalf("episodes = %+v, want one", eps)
	}
	if got, want := eps[0].Status, "completed"; got != want {
		t.Errorf("status = %q, want %q", got, want)
	}
	if got, want := eps[0].Dir, filepath.Join(e.dir, "episodes", "ep-a"); got != want {
		t.Errorf("dir = %q, want %q", got, want)
	}
	if got, want := string(eps[0].Summary), `{"success":true}`; got != want {
		t.Errorf("summary = %s, want %s", got, want)
	}
}

func TestRetryStartsFresh(t *testing.T) {
	e := newEnv(t)
	started := make(chan string, 4)
	k := jobkind.Kind{Name: "flaky", OnInterrupt: jobkind.Retry, Run: func(ctx context.Context, job jobkind.Job, rep jobkind.Reporter) error {
		marker := filepath.Join(job.WorkDir, "marker")
		if _, err := os.Stat(marker); err == nil {
			return errors.New("work dir was not fresh")
		}
		if err := os.WriteFile(marker, []byte("x"), 0o644); err != nil {
			return err
		}
		started <- job.ID
		if job.Attempt == 1 {
			<-ctx.Done()
			return ctx.Err()
		}
		return nil
	}}
	m := e.manager(t, 1, k)
	j := submit(t, m, "flaky", "")
	<-started
	if err := m.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	m2 := e.manager(t, 1, k)
	defer m2.Close(context.Background())
	got := awaitState(t, e.store, j.ID, api.StateSucceeded, api.StateFailed)
	if got.State != api.StateSucceeded || got.Attempt != 2 {
		t.Fatalf("state %s attempt %d (%s)", got.State, got.Attempt, got.Error)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "jobs", j.ID+".attempt-1", "marker")); err != nil {
		t.Errorf("first attempt's files were not kept: %v", err)
	}
}

func TestLoadTask(t *testing.T) {
	dir := t.TempDir()
	spec := "id: t1\nprompt: p\ninputs: [data]\nlimits: {episode_wall_time: 1m, agent_turns: 3}\n"
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, taskspec.FileName), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := jobkind.Job{ID: "x", TaskDir: dir}.LoadTask()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.Dir, dir; got != want {
		t.Errorf("spec dir = %q, want %q", got, want)
	}
	if _, err := (jobkind.Job{ID: "y"}).LoadTask(); err == nil {
		t.Error("loaded a task for a job without one")
	}
}

func TestOperatorRetry(t *testing.T) {
	e := newEnv(t)
	k := jobkind.Kind{Name: "once", Run: func(ctx context.Context, job jobkind.Job, rep jobkind.Reporter) error {
		if job.Attempt == 1 {
			return errors.New("first attempt fails")
		}
		return nil
	}}
	m := e.manager(t, 1, k, WaitKind())
	defer m.Close(context.Background())
	j := submit(t, m, "once", "")
	awaitState(t, e.store, j.ID, api.StateFailed)
	if _, err := m.Retry(context.Background(), j.ID); err != nil {
		t.Fatal(err)
	}
	got := awaitState(t, e.store, j.ID, api.StateSucceeded)
	if got.Attempt != 2 || got.Error != "" {
		t.Errorf("attempt %d, error %q; want 2 and none", got.Attempt, got.Error)
	}
	if _, err := m.Retry(context.Background(), j.ID); !errors.Is(err, api.ErrConflict) {
		t.Errorf("retry of a succeeded job = %v, want ErrConflict", err)
	}
}
