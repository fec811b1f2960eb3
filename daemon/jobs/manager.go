package jobs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/store"
	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/errclass"
	"github.com/mass-dev/mass/jobkind"
)

// DefaultConcurrency is how many jobs run at once when Options leaves it 0.
const DefaultConcurrency = 2

var (
	errCancelled = errors.New("cancelled by request")
	errShutdown  = errors.New("massd is shutting down")
)

// Options configure a Manager.
type Options struct {
	Store       *store.Store
	Kinds       []jobkind.Kind
	Concurrency int
	Layout      datadir.Layout // where job work dirs and task dirs live
	Logger      *slog.Logger
	// MinFreeBytes: new jobs are refused while the data dir's disk has
	// less free; 0 means DefaultMinFreeBytes, negative turns the check off.
	MinFreeBytes int64
	// Held starts the manager with dispatch held: jobs are accepted and
	// queued, none starts until Release (start-up recovery in the
	// background).
	Held bool
}

// Manager queues, runs, cancels and recovers jobs. It knows nothing of HTTP.
// Its methods are safe for concurrent use.
type Manager struct {
	store   *store.Store
	kinds   map[string]jobkind.Kind
	conc    int
	layout  datadir.Layout
	minFree int64
	log     *slog.Logger
	hub     hub

	runCtx    context.Context
	runCancel context.CancelCauseFunc
	wake      chan struct{}
	stop      chan struct{}
	loopDone  chan struct{}
	wg        sync.WaitGroup

	mu      sync.Mutex
	running map[string]context.CancelCauseFunc
	closed  bool
	started bool // the dispatch loop runs; Close waits for it only then
	held    bool // no job starts until Release
}

// NewManager checks the kinds and returns a manager; call Start to run it.
func NewManager(o Options) (*Manager, error) {
	if o.Store == nil {
		return nil, fmt.Errorf("job manager needs a store: %w", api.ErrInvalid)
	}
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	switch {
	case o.MinFreeBytes == 0:
		o.MinFreeBytes = DefaultMinFreeBytes
	case o.MinFreeBytes < 0:
		o.MinFreeBytes = 0
	}
	m := &Manager{minFree: o.MinFreeBytes,
		store: o.Store, kinds: map[string]jobkind.Kind{}, conc: o.Concurrency, layout: o.Layout,
		log:  o.Logger.With("component", "jobs"),
		wake: make(chan struct{}, 1), stop: make(chan struct{}), loopDone: make(chan struct{}),
		running: map[string]context.CancelCauseFunc{}, held: o.Held,
	}
	for _, k := range o.Kinds {
		if k.Name == "" || k.Run == nil {
			return nil, fmt.Errorf("job kind %q needs a name and a Run function: %w", k.Name, api.ErrInvalid)
		}
		if _, dup := m.kinds[k.Name]; dup {
			return nil, fmt.Errorf("job kind %q registered twice: %w", k.Name, api.ErrInvalid)
		}
		m.kinds[k.Name] = k
	}
	m.runCtx, m.runCancel = context.WithCancelCause(context.Background())
	return m, nil
}

// KindNames lists the registered kinds, sorted.
func (m *Manager) KindNames() []string {
	out := make([]string, 0, len(m.kinds))
	for n := range m.kinds {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Start recovers jobs a previous daemon left running, then starts
// dispatching queued jobs.
func (m *Manager) Start(ctx context.Context) error {
	if err := m.recover(ctx); err != nil {
		return fmt.Errorf("recover jobs: %w", err)
	}
	m.mu.Lock()
	m.started = true
	m.mu.Unlock()
	go m.loop()
	return nil
}

func (m *Manager) loop() {
	defer close(m.loopDone)
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		m.dispatch()
		select {
		case <-m.stop:
			return
		case <-m.wake:
		case <-tick.C:
		}
	}
}

// Release lets a manager started Held run its queued jobs.
func (m *Manager) Release() {
	m.mu.Lock()
	m.held = false
	m.mu.Unlock()
	m.poke()
}

func (m *Manager) poke() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

func (m *Manager) dispatch() {
	m.mu.Lock()
	free := m.conc - len(m.running)
	closed := m.closed || m.held
	m.mu.Unlock()
	if free <= 0 || closed {
		return
	}
	ctx := context.Background()
	queued, err := m.store.Queued(ctx, free)
	if err != nil {
		m.log.Error("list queued jobs", "err", err)
		return
	}
	for _, j := range queued {
		now := time.Now()
		ok, err := m.store.Claim(ctx, j.ID, now, store.EventInput{
			Type: "started", Message: fmt.Sprintf("attempt %d", j.Attempt), Fields: map[string]any{"attempt": j.Attempt}})
		if err != nil {
			m.log.Error("claim job", "job", j.ID, "err", err)
			continue
		}
		if !ok {
			continue
		}
		j.State, j.Started = api.StateRunning, &now
		m.hub.notify(j.ID)
		k, known := m.kinds[j.Kind]
		if !known {
			m.finish(j, api.StateFailed, fmt.Sprintf("kind %q is not available in this massd", j.Kind), false)
			continue
		}
		m.startRun(j, k)
	}
}

func (m *Manager) startRun(j api.Job, k jobkind.Kind) {
	ctx, cancel := context.WithCancelCause(m.runCtx)
	m.mu.Lock()
	m.running[j.ID] = cancel
	m.mu.Unlock()
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		state, msg, again := m.run(ctx, j, k)
		m.mu.Lock()
		delete(m.running, j.ID)
		m.mu.Unlock()
		cancel(nil)
		m.finish(j, state, msg, again)
		m.poke()
	}()
}

// run runs one attempt and says how it ended.
func (m *Manager) run(ctx context.Context, j api.Job, k jobkind.Kind) (state, msg string, again bool) {
	log := m.log.With("job", j.ID, "kind", j.Kind, "attempt", j.Attempt)
	rep := &reporter{m: m, id: j.ID, log: log}
	job := jobkind.Job{
		ID: j.ID, Kind: j.Kind, TaskID: j.TaskID, Params: j.Params, Attempt: j.Attempt,
		Layout: m.layout, WorkDir: m.layout.Job(j.ID),
	}
	if j.TaskID != "" {
		job.TaskDir = m.layout.Task(j.TaskID)
	}
	if err := os.MkdirAll(job.WorkDir, 0o750); err != nil {
		return api.StateFailed, fmt.Sprintf("create work dir: %v", err), false
	}
	log.Info("job started")
	err := safeRun(ctx, k, job, rep)
	switch cause := context.Cause(ctx); {
	case err == nil:
		return api.StateSucceeded, "", false
	case errors.Is(cause, errCancelled):
		return api.StateCancelled, "cancelled by request", false
	case errors.Is(cause, errShutdown):
		return api.StateInterrupted, "massd shut down while the job was running", true
	default:
		return api.StateFailed, err.Error(), false
	}
}

func safeRun(ctx context.Context, k jobkind.Kind, job jobkind.Job, rep jobkind.Reporter) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("job kind %s panicked: %v", k.Name, r)
		}
	}()
	return k.Run(ctx, job, rep)
}

// finish records how an attempt ended. A failed write (a full disk) is
// retried with backoff until it succeeds, so the job reaches its terminal
// state with its reason once space returns; during shutdown it gives up
// after a few tries and the next start records the job interrupted.
func (m *Manager) finish(j api.Job, state, msg string, again bool) {
	ev := store.EventInput{Type: state, Message: msg, Fields: map[string]any{"attempt": j.Attempt}}
	delay := finishRetryMin
	for try := 1; ; try++ {
		_, _, err := m.store.Finish(context.Background(), j.ID, state, msg, time.Now(), again, ev)
		if err == nil {
			break
		}
		m.log.Error("record job end; retrying", "job", j.ID, "state", state, "try", try, "err", err)
		select {
		case <-m.stop:
			if try >= 3 {
				return
			}
		default:
		}
		time.Sleep(delay)
		delay = min(2*delay, finishRetryMax)
	}
	m.log.Info("job finished", "job", j.ID, "state", state, "msg", msg)
	m.hub.notify(j.ID)
}

// Backoff between tries to record a job's end.
var finishRetryMin, finishRetryMax = 100 * time.Millisecond, 5 * time.Second

// Submit validates and queues a job.
func (m *Manager) Submit(ctx context.Context, req api.JobRequest) (api.Job, error) {
	k, ok := m.kinds[req.Kind]
	if !ok {
		return api.Job{}, fmt.Errorf("unknown job kind %q; this massd runs: %v: %w", req.Kind, m.KindNames(), api.ErrInvalid)
	}
	if len(req.Params) > 0 {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(req.Params, &obj); err != nil {
			return api.Job{}, fmt.Errorf("params must be a JSON object: %v: %w", err, api.ErrInvalid)
		}
	}
	if k.Validate != nil {
		if err := k.Validate(req.Params); err != nil {
			return api.Job{}, fmt.Errorf("params for %s: %v: %w", req.Kind, err, api.ErrInvalid)
		}
	}
	if err := m.checkTask(ctx, k, req.TaskID); err != nil {
		return api.Job{}, err
	}
	m.mu.Lock()
	closed := m.closed
	m.mu.Unlock()
	if closed {
		return api.Job{}, fmt.Errorf("massd is shutting down: %w", api.ErrUnavailable)
	}
	if err := m.CheckDisk(); err != nil {
		return api.Job{}, err
	}
	id := NewID()
	j := api.Job{
		ID: id, Kind: req.Kind, TaskID: req.TaskID, State: api.StateQueued, Attempt: 1,
		Params: req.Params, Created: time.Now().UTC(), WorkDir: m.layout.Job(id),
	}
	if err := m.store.CreateJob(ctx, j, store.EventInput{Type: "queued"}); err != nil {
		return api.Job{}, err
	}
	m.poke()
	return m.store.Job(ctx, id)
}

// checkTask refuses a submission whose kind needs a task but has none, or
// that names a task this massd does not have, as invalid (400).
func (m *Manager) checkTask(ctx context.Context, k jobkind.Kind, id string) error {
	if id == "" {
		if k.NeedsTask {
			return &errclass.FieldError{Field: "task", Msg: fmt.Sprintf("a %s job needs a task; pass --task ID (see massctl task list)", k.Name)}
		}
		return nil
	}
	_, err := m.store.Task(ctx, id)
	if errors.Is(err, api.ErrNotFound) {
		return &errclass.FieldError{Field: "task", Msg: fmt.Sprintf("no task %q on this massd; add it with massctl task add or pick one from massctl task list", id)}
	}
	if err != nil {
		return fmt.Errorf("job for task %s: %w", id, err)
	}
	return nil
}

// Cancel stops a job: a queued (or interrupted) job is cancelled at once, a
// running one has its context cancelled and ends as cancelled when its Run
// returns. Cancelling a finished job is api.ErrConflict.
func (m *Manager) Cancel(ctx context.Context, id string) (api.Job, error) {
	j, err := m.store.Job(ctx, id)
	if err != nil {
		return j, err
	}
	m.mu.Lock()
	cancel, running := m.running[id]
	m.mu.Unlock()
	switch {
	case running:
		if err := m.store.RequestCancel(ctx, id); err != nil {
			return j, err
		}
		if _, err := m.store.AppendEvent(ctx, id, "cancel_requested", "", nil, time.Now()); err != nil {
			return j, err
		}
		cancel(errCancelled)
	case j.State == api.StateQueued || j.State == api.StateInterrupted:
		ok, err := m.store.CancelQueued(ctx, id, time.Now(), store.EventInput{Type: api.StateCancelled, Message: "cancelled before it ran"})
		if err != nil {
			return j, err
		}
		if !ok {
			return j, fmt.Errorf("job %s changed state; try again: %w", id, api.ErrConflict)
		}
	case j.State == api.StateRunning:
		return j, fmt.Errorf("job %s is finishing; check its state again: %w", id, api.ErrConflict)
	default:
		return j, fmt.Errorf("job %s is already %s: %w", id, j.State, api.ErrConflict)
	}
	m.hub.notify(id)
	return m.store.Job(ctx, id)
}

// Subscribe returns a channel that receives a value whenever job id records
// an event or changes progress or state, and a function to unsubscribe.
func (m *Manager) Subscribe(id string) (<-chan struct{}, func()) { return m.hub.subscribe(id) }

// Close drains: no new jobs start, running jobs get their context cancelled
// and are recorded as interrupted once their Run returns (their kind's
// policy applies at the next start). It waits until they return or ctx ends.
func (m *Manager) Close(ctx context.Context) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	n, started := len(m.running), m.started
	m.mu.Unlock()
	close(m.stop)
	if started {
		<-m.loopDone
	}
	if n > 0 {
		m.log.Info("draining running jobs", "count", n)
	}
	m.runCancel(errShutdown)
	done := make(chan struct{})
	go func() { m.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("drain jobs: %w", ctx.Err())
	}
}

// NewID returns a new sortable job id such as "j-lx3k2a9f-1a2b3c".
func NewID() string {
	var b [3]byte
	rand.Read(b[:])
	return "j-" + strconv.FormatInt(time.Now().UnixMilli(), 36) + "-" + hex.EncodeToString(b[:])
}
