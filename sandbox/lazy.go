package sandbox

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/mass-dev/mass/errclass"
)

// Lazy is a Runtime that opens the real one on first use, so that a daemon
// starts while the sandbox engine is down and recovers once it is up: open
// is called again after a failure. Close closes what was opened; after it
// every method fails with errclass.ErrClosed.
type Lazy struct {
	name string
	open func(ctx context.Context) (Runtime, error)

	mu     sync.Mutex
	rt     Runtime
	closed bool
}

// NewLazy returns a Lazy runtime named name (what Name reports) that builds
// the real one with open.
func NewLazy(name string, open func(ctx context.Context) (Runtime, error)) *Lazy {
	return &Lazy{name: name, open: open}
}

var _ Runtime = (*Lazy)(nil)

// Get returns the real runtime, opening it if need be. Concurrent callers
// share one open; its error is returned to each of them.
func (l *Lazy) Get(ctx context.Context) (Runtime, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, fmt.Errorf("sandbox runtime: %w", errclass.ErrClosed)
	}
	if l.rt != nil {
		return l.rt, nil
	}
	rt, err := l.open(ctx)
	if err != nil {
		return nil, err
	}
	l.rt = rt
	return rt, nil
}

// Name implements Runtime.
func (l *Lazy) Name() string { return l.name }

// CreateWorkspace implements Runtime.
func (l *Lazy) CreateWorkspace(ctx context.Context, ws WorkspaceSpec, inputs []Input) error {
	rt, err := l.Get(ctx)
	if err != nil {
		return err
	}
	return rt.CreateWorkspace(ctx, ws, inputs)
}

// ExportWorkspace implements Runtime.
func (l *Lazy) ExportWorkspace(ctx context.Context, episode string, w io.Writer, maxBytes int64) ([]FileInfo, error) {
	rt, err := l.Get(ctx)
	if err != nil {
		return nil, err
	}
	return rt.ExportWorkspace(ctx, episode, w, maxBytes)
}

// RemoveWorkspace implements Runtime.
func (l *Lazy) RemoveWorkspace(ctx context.Context, episode string) error {
	rt, err := l.Get(ctx)
	if err != nil {
		return err
	}
	return rt.RemoveWorkspace(ctx, episode)
}

// Create implements Runtime.
func (l *Lazy) Create(ctx context.Context, spec Spec) (Sandbox, error) {
	rt, err := l.Get(ctx)
	if err != nil {
		return nil, err
	}
	return rt.Create(ctx, spec)
}

// List implements Runtime.
func (l *Lazy) List(ctx context.Context, episode string) ([]Info, error) {
	rt, err := l.Get(ctx)
	if err != nil {
		return nil, err
	}
	return rt.List(ctx, episode)
}

// KillEpisode implements Runtime.
func (l *Lazy) KillEpisode(ctx context.Context, episode string) error {
	rt, err := l.Get(ctx)
	if err != nil {
		return err
	}
	return rt.KillEpisode(ctx, episode)
}

// ReapOrphans implements Runtime.
func (l *Lazy) ReapOrphans(ctx context.Context, live func(episode string) bool) (int, error) {
	rt, err := l.Get(ctx)
	if err != nil {
		return 0, err
	}
	return rt.ReapOrphans(ctx, live)
}

// Report implements Runtime.
func (l *Lazy) Report(ctx context.Context) (Report, error) {
	rt, err := l.Get(ctx)
	if err != nil {
		return Report{}, err
	}
	return rt.Report(ctx)
}

func (l *Lazy) Grade(ctx context.Context, g GradeSpec) (ExecResult, error) {
	rt, err := l.Get(ctx)
	if err != nil {
		return ExecResult{}, err
	}
	return rt.Grade(ctx, g)
}

// Close closes the real runtime if it was opened. It is idempotent.
func (l *Lazy) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	rt := l.rt
	l.rt = nil
	if rt == nil {
		return nil
	}
	return rt.Close()
}
