// Package groupsync makes lines appended to a file durable by group commit:
// writers waiting for their sequence number share one fsync, a failed fsync
// is reported to every waiter it leaves behind, and Close flushes. The ledger
// and the recording writers use it.
package groupsync

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	"github.com/mass-dev/mass/errclass"
)

// ErrClosed is returned by Wait for a sequence number written after Close.
var ErrClosed = fmt.Errorf("groupsync: %w", errclass.ErrClosed)

// File is what a Group makes durable. Sync must make every write that
// returned before it started durable; *os.File does.
type File interface {
	Sync() error
	Close() error
}

var _ File = (*os.File)(nil)

// Group tracks which sequence numbers of one file are durable.
//
// Its owner writes line seq to the file, then calls Written(seq), in
// increasing seq order (typically under the owner's own lock), and then
// Wait(seq) without holding that lock. Wait and Close are safe for
// concurrent use. Once an fsync fails the error is sticky: a later fsync
// may report success although the failed writes were lost, so none is tried.
type Group struct {
	f       File
	written atomic.Int64 // last seq handed to f

	// failed holds the first fsync error. It is set under mu but read
	// without it, so that an owner checking Err while holding its own lock
	// does not wait for an fsync in flight.
	failed atomic.Pointer[error]

	mu     sync.Mutex // serializes fsync and Close; guards synced, closed
	synced int64      // last seq known durable
	closed bool
}

// New returns a Group for f whose lines up to seq are already durable.
func New(f File, seq int64) *Group {
	g := &Group{f: f, synced: seq}
	g.written.Store(seq)
	return g
}

// Written records that the lines up to seq have been written to the file.
func (g *Group) Written(seq int64) { g.written.Store(seq) }

// Wait returns once the lines up to seq are durable. One fsync covers every
// line written before it started, so concurrent waiters share it. The error
// is the fsync error (the same one for every waiter it failed) or ErrClosed.
func (g *Group) Wait(seq int64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.synced >= seq {
		return nil
	}
	if err := g.Err(); err != nil {
		return err
	}
	if g.closed {
		return ErrClosed
	}
	target := g.written.Load()
	if err := g.f.Sync(); err != nil {
		g.fail(err)
		return err
	}
	g.synced = target
	return nil
}

// Err returns the sticky fsync error, if any; an owner should refuse to
// append once it is set. It does not wait for an fsync in flight.
func (g *Group) Err() error {
	if p := g.failed.Load(); p != nil {
		return *p
	}
	return nil
}

func (g *Group) fail(err error) { g.failed.Store(&err) }

// Close makes every written line durable and closes the file; waiters still
// queued then return at once. It returns the fsync error (or the sticky one)
// or the close error. Calls after the first return nil.
func (g *Group) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil
	}
	g.closed = true
	err := g.Err()
	if err == nil {
		target := g.written.Load()
		if err = g.f.Sync(); err == nil {
			g.synced = target
		} else {
			g.fail(err)
		}
	}
	if cerr := g.f.Close(); err == nil {
		err = cerr
	}
	return err
}
