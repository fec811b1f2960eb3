package groupsync_test

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/mass-dev/mass/agents/internal/groupsync"
)

// file is a File that counts lines "written" to it and makes them durable
// on Sync. A Sync may be held at a gate, and may fail.
type file struct {
	mu      sync.Mutex
	written int64 // lines handed to the file
	durable int64 // lines covered by a successful Sync
	syncs   int
	closed  bool
	misuse  []string // calls after Close

	gate    chan struct{} // when set, the next Sync announces itself on entered and waits here
	entered chan struct{}
	fail    error // returned by every Sync when set
}

func (f *file) write() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.written++
	return f.written
}

func (f *file) Sync() error {
	f.mu.Lock()
	gate, entered := f.gate, f.entered
	f.gate = nil
	f.mu.Unlock()
	if gate != nil {
		close(entered)
		<-gate
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.syncs++
	if f.closed {
		f.misuse = append(f.misuse, "Sync after Close")
	}
	if f.fail != nil {
		return f.fail
	}
	f.durable = f.written
	return nil
}

func (f *file) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		f.misuse = append(f.misuse, "second Close")
	}
	f.closed = true
	return nil
}

// hold makes the next Sync block until the returned release is called; the
// returned channel is closed once that Sync has started.
func (f *file) hold() (entered <-chan struct{}, release func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	gate := make(chan struct{})
	f.gate, f.entered = gate, make(chan struct{})
	return f.entered, func() { close(gate) }
}

func (f *file) state() (written, durable int64, syncs int, closed bool, misuse []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.written, f.durable, f.syncs, f.closed, f.misuse
}

// owner appends like the ledger and recording writers do: write and
// Written under its own lock, Wait outside it.
type owner struct {
	mu sync.Mutex
	f  *file
	g  *groupsync.Group
}

func (o *owner) append() (int64, error) {
	o.mu.Lock()
	if err := o.g.Err(); err != nil {
		o.mu.Unlock()
		return 0, err
	}
	seq := o.f.write()
	o.g.Written(seq)
	o.mu.Unlock()
	return seq, o.g.Wait(seq)
}

func newOwner() *owner {
	f := &file{}
	return &owner{f: f, g: groupsync.New(f, 0)}
}

func TestConcurrentAppendsAreDurable(t *testing.T) {
	const goroutines, each = 32, 50
	o := newOwner()
	var wg sync.WaitGroup
	errs := make(chan error, goroutines*each)
	for range goroutines {
		wg.Go(func() {
			for range each {
				seq, err := o.append()
				if err != nil {
					errs <- err
					return
				}
				// The contract: once Wait returns, the line is durable.
				if _, durable, _, _, _ := o.f.state(); durable < seq {
					errs <- errors.New("Wait returned before its line was durable")
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	written, durable, syncs, _, _ := o.f.state()
	if got, want := written, int64(goroutines*each); got != want {
		t.Errorf("written = %d, want %d", got, want)
	}
	if durable != written {
		t.Errorf("durable = %d, want %d", durable, written)
	}
	if syncs > goroutines*each {
		t.Errorf("%d fsyncs for %d appends", syncs, goroutines*each)
	}
	t.Logf("%d appends, %d fsyncs", goroutines*each, syncs)
	if err := o.g.Close(); err != nil {
		t.Fatal(err)
	}
}

// While one fsync is in flight, every line written meanwhile is covered by
// the single next fsync, however many goroutines wait for them.
func TestWaitersShareOneFsync(t *testing.T) {
	const waiters = 64
	o := newOwner()
	entered, release := o.f.hold()
	var wg sync.WaitGroup
	errs := make([]error, waiters+1)
	wg.Go(func() { _, errs[0] = o.append() })
	<-entered // the first fsync, covering seq 1 only, is in flight
	seqs := make([]int64, waiters)
	for i := range seqs {
		seqs[i] = o.f.write()
		o.g.Written(seqs[i])
	}
	for i, seq := range seqs {
		wg.Go(func() { errs[i+1] = o.g.Wait(seq) })
	}
	release()
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("waiter %d: %v", i, err)
		}
	}
	if _, durable, syncs, _, _ := o.f.state(); syncs != 2 || durable != waiters+1 {
		t.Errorf("syncs = %d, durable = %d; want 2 fsyncs making %d lines durable", syncs, durable, waiters+1)
	}
}

// queueWaiters holds one append inside its fsync and queues n-1 more waiters
// behind it; release lets the fsync finish. errs[i] is waiter i's result
// once wg is done.
func queueWaiters(o *owner, n int) (wg *sync.WaitGroup, errs []error, release func()) {
	entered, release := o.f.hold()
	wg = &sync.WaitGroup{}
	errs = make([]error, n)
	wg.Go(func() { _, errs[0] = o.append() })
	<-entered
	for i := 1; i < n; i++ {
		seq := o.f.write()
		o.g.Written(seq)
		wg.Go(func() { errs[i] = o.g.Wait(seq) })
	}
	return wg, errs, release
}

func TestFsyncErrorReachesEveryWaiter(t *testing.T) {
	const waiters = 16
	o := newOwner()
	boom := errors.New("injected EIO")
	o.f.fail = boom
	wg, errs, release := queueWaiters(o, waiters)
	release()
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, boom) {
			t.Errorf("waiter %d: err = %v, want %v", i, err, boom)
		}
	}
	// The error is sticky: no second fsync may pretend the lost lines are safe.
	o.f.mu.Lock()
	o.f.fail = nil
	o.f.mu.Unlock()
	if _, err := o.append(); !errors.Is(err, boom) {
		t.Errorf("append after a failed fsync: err = %v, want %v", err, boom)
	}
	if err := o.g.Err(); !errors.Is(err, boom) {
		t.Errorf("Err() = %v, want %v", err, boom)
	}
	if err := o.g.Close(); !errors.Is(err, boom) {
		t.Errorf("Close() = %v, want %v", err, boom)
	}
	_, durable, syncs, closed, misuse := o.f.state()
	if syncs != 1 || durable != 0 || !closed || len(misuse) > 0 {
		t.Errorf("syncs = %d, durable = %d, closed = %v, misuse %v; want 1 failed fsync, nothing durable, file closed",
			syncs, durable, closed, misuse)
	}
}

func TestCloseWhileWaitersWait(t *testing.T) {
	const waiters = 16
	o := newOwner()
	wg, errs, release := queueWaiters(o, waiters)
	closeErr := make(chan error, 1)
	go func() { closeErr <- o.g.Close() }()
	release()
	wg.Wait()
	if err := <-closeErr; err != nil {
		t.Fatalf("Close: %v", err)
	}
	for i, err := range errs {
		if err != nil {
			t.Errorf("waiter %d: %v", i, err)
		}
	}
	written, durable, _, closed, misuse := o.f.state()
	if durable != written || !closed || len(misuse) > 0 {
		t.Errorf("durable %d of %d, closed = %v, misuse %v; want all durable, file closed once, no Sync after Close",
			durable, written, closed, misuse)
	}
	if err := o.g.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := o.g.Wait(written); err != nil {
		t.Errorf("Wait for a durable line after Close: %v", err)
	}
	o.g.Written(written + 1)
	if err := o.g.Wait(written + 1); !errors.Is(err, groupsync.ErrClosed) {
		t.Errorf("Wait for a line written after Close: err = %v, want ErrClosed", err)
	}
}

func TestStartsDurable(t *testing.T) {
	f := &file{}
	g := groupsync.New(f, 7)
	if err := g.Wait(7); err != nil {
		t.Fatal(err)
	}
	if _, _, syncs, _, _ := f.state(); syncs != 0 {
		t.Errorf("%d fsyncs for lines already durable, want 0", syncs)
	}
}

func TestOSFile(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	g := groupsync.New(f, 0)
	if _, err := f.WriteString("one\n"); err != nil {
		t.Fatal(err)
	}
	g.Written(1)
	if err := g.Wait(1); err != nil {
		t.Fatal(err)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("two\n"); err == nil {
		t.Error("file still open after Close")
	}
}
