// Package daemon assembles massd: it locks the data directory, opens the
// store, starts the job manager, serves the API on a unix socket (and
// optionally TCP with a bearer token) and drains everything on shutdown.
// Builtins are the parts it shares among the job kinds; Builtins.Services
// is the one implementation of services.Services, which every kind in
// Builtins.Kinds is constructed from.
package daemon

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mass-dev/mass/agents/grade"
	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/catalog"
	"github.com/mass-dev/mass/daemon/config"
	"github.com/mass-dev/mass/daemon/jobs"
	"github.com/mass-dev/mass/daemon/server"
	"github.com/mass-dev/mass/daemon/store"
	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/jobkind"
	"github.com/mass-dev/mass/taskspec"
)

// DBName is the database file inside the data directory.
const DBName = datadir.DBFile

// Options configure a Daemon.
type Options struct {
	Config  *config.Config
	Version string
	// Builtins, if set, are the shared parts built by NewBuiltins: their
	// kinds run unless Kinds is set, they reap orphaned sandboxes at start
	// unless ReapOrphans is set, and the Daemon closes them after draining.
	Builtins *Builtins
	Kinds    []jobkind.Kind
	Logger   *slog.Logger
	// ReapOrphans, if set, runs once at start-up, in the background while
	// the API answers (healthz "recovering") and before any job starts:
	// the sandbox runtime removes containers and volumes a crashed massd
	// left behind and the episodes it cut off are closed. An error is
	// logged, not fatal.
	ReapOrphans ReapFunc
	// ReapInterval is how often the builtins' periodic reaper runs;
	// 0 means episode.DefaultReapInterval.
	ReapInterval time.Duration
	// ShutdownTimeout bounds how long the drain waits for running jobs and
	// open requests; default 30s.
	ShutdownTimeout time.Duration
}

// Daemon is a running massd: Open starts it, Serve waits for the end, Close
// drains. Everything Open acquired is released by Close, and by Open itself
// when it fails.
type Daemon struct {
	o       Options
	log     *slog.Logger
	layout  datadir.Layout
	closers []func() // run in reverse order by Close
	mgr     *jobs.Manager
	tasks   *catalog.Catalog
	servers []*http.Server
	socket  string // removed by closeServers once listening
	errc    chan error
	rec     *recovery
	// Requests see baseCtx, cancelled at shutdown so that event streams end.
	baseCtx    context.Context
	cancelBase context.CancelFunc
}

// Run starts massd and serves until ctx is cancelled, then drains: running
// jobs are cancelled and recorded as interrupted, open requests finish, and
// the socket is removed.
func Run(ctx context.Context, o Options) error {
	d, err := Open(ctx, o)
	if err != nil {
		return err
	}
	serveErr := d.Serve(ctx)
	d.Close()
	return serveErr
}

// Open locks the data directory, opens the store, sweeps unfinished task
// uploads, starts the job manager held and listens; then, in the
// background, it reaps what a crashed massd left and releases the jobs.
func Open(ctx context.Context, o Options) (_ *Daemon, err error) {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.ShutdownTimeout <= 0 {
		o.ShutdownTimeout = 30 * time.Second
	}
	if b := o.Builtins; b != nil {
		if o.Kinds == nil {
			o.Kinds = b.Kinds()
		}
		if o.ReapOrphans == nil {
			o.ReapOrphans = b.Recover
		}
	}
	d := &Daemon{o: o, log: o.Logger, layout: datadir.New(o.Config.DataDir), rec: newRecovery()}
	d.baseCtx, d.cancelBase = context.WithCancel(context.Background())
	d.closers = append(d.closers, d.cancelBase)
	if b := o.Builtins; b != nil {
		d.closers = append(d.closers, func() {
			if err := b.Close(); err != nil {
				d.log.Warn("close builtins", "err", err)
			}
		})
	}
	defer func() {
		if err != nil {
			d.release()
		}
	}()
	st, err := d.openState(ctx)
	if err != nil {
		return nil, err
	}
	if b := o.Builtins; b != nil {
		if err := b.AttachStore(ctx, st); err != nil {
			return nil, err
		}
	}
	if err := d.startJobs(ctx, st); err != nil {
		return nil, err
	}
	if err := d.listen(st); err != nil {
		return nil, err
	}
	d.startRecovery()
	if b := o.Builtins; b != nil {
		go b.ReapPeriodically(d.baseCtx, o.ReapInterval)
	}
	d.startRetention(d.baseCtx)
	for name, m := range o.Config.Models {
		d.log.Info("model endpoint", "name", name, "endpoint", m)
	}
	d.log.Info("massd ready", "version", o.Version, "socket", o.Config.Socket, "data_dir", d.layout.Root, "kinds", strings.Join(d.mgr.KindNames(), ","))
	return d, nil
}

// openState creates and locks the data directory, opens the store and
// sweeps what a crash left.
func (d *Daemon) openState(ctx context.Context) (*store.Store, error) {
	if err := os.MkdirAll(d.layout.Root, 0o750); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	unlock, err := lockDataDir(d.layout)
	if err != nil {
		return nil, err
	}
	d.closers = append(d.closers, unlock)
	st, err := store.Open(ctx, d.layout.DB())
	if err != nil {
		return nil, err
	}
	d.closers = append(d.closers, func() { st.Close() })
	d.tasks = catalog.New(st, d.layout, d.log.With("component", "api"))
	if err := d.tasks.Sweep(ctx); err != nil {
		d.log.Warn("sweep unfinished task uploads", "err", err)
	}
	return st, nil
}

// startJobs starts the job manager; Close drains it.
func (d *Daemon) startJobs(ctx context.Context, st *store.Store) error {
	mgr, err := jobs.NewManager(jobs.Options{Store: st, Kinds: d.o.Kinds, Concurrency: d.o.Config.Jobs.Concurrency, Layout: d.layout, Logger: d.log, Held: true})
	if err != nil {
		return err
	}
	if err := mgr.Start(ctx); err != nil {
		return err
	}
	d.mgr = mgr
	// Servers stop after the drain, so that event streams carry the jobs'
	// ends: closeServers is queued first and so runs last.
	d.closers = append(d.closers, d.closeServers, func() {
		drain, cancel := context.WithTimeout(context.Background(), d.o.ShutdownTimeout)
		defer cancel()
		if err := mgr.Close(drain); err != nil {
			d.log.Warn("drain jobs", "err", err)
		}
	})
	return nil
}

// listen opens the unix socket and, if configured, the TCP listener, and
// serves the API on them.
func (d *Daemon) listen(st *store.Store) error {
	c := d.o.Config
	var rnd [4]byte
	rand.Read(rnd[:])
	var models func() []api.Model
	var testModel func(context.Context, string) (api.ModelTest, error)
	var engine func(context.Context) *api.EngineHealth
	var gradeTask func(context.Context, *taskspec.Spec, io.Reader) (grade.Grade, error)
	var unregister func([]string)
	if d.o.Builtins != nil {
		models, testModel, engine = d.o.Builtins.ModelList, d.o.Builtins.TestModel, d.o.Builtins.EngineHealth
		gradeTask, unregister = d.o.Builtins.GradeTask, d.o.Builtins.UnregisterModels
	}
	srv := server.New(server.Options{Store: st, Jobs: d.mgr, Tasks: d.tasks, Layout: d.layout, Models: models, TestModel: testModel, GradeTask: gradeTask,
		Recovering: d.rec.state, Engine: engine, Version: d.o.Version, DaemonID: hex.EncodeToString(rnd[:]), Logger: d.log,
		UnregisterModels: unregister})
	ln, err := ListenUnix(c.Socket)
	if err != nil {
		return err
	}
	d.socket = c.Socket
	base := func(net.Listener) context.Context { return d.baseCtx }
	d.servers = []*http.Server{server.NewHTTPServer(srv.Handler(), base)}
	listeners := []net.Listener{server.LimitListener(ln, server.MaxConnsUnix)}
	if c.TCP.Listen != "" {
		token, err := readToken(c.TCP.TokenFile)
		if err != nil {
			ln.Close()
			return err
		}
		tl, err := net.Listen("tcp", c.TCP.Listen)
		if err != nil {
			ln.Close()
			return fmt.Errorf("listen on tcp %s: %w", c.TCP.Listen, err)
		}
		d.servers = append(d.servers, server.NewTokenHTTPServer(srv.Handler(), token, base))
		listeners = append(listeners, server.LimitListener(tl, server.MaxConnsTCP))
		d.log.Info("listening", "tcp", tl.Addr().String())
	}
	d.errc = make(chan error, len(d.servers))
	for i := range d.servers {
		go func(s *http.Server, l net.Listener) {
			if err := s.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
				d.errc <- err
			}
		}(d.servers[i], listeners[i])
	}
	return nil
}

// closeServers ends event streams, lets open requests finish within the
// shutdown timeout and removes the socket.
func (d *Daemon) closeServers() {
	if d.socket != "" {
		defer os.Remove(d.socket)
	}
	d.cancelBase()
	drain, cancel := context.WithTimeout(context.Background(), d.o.ShutdownTimeout)
	defer cancel()
	for _, s := range d.servers {
		if err := s.Shutdown(drain); err != nil {
			s.Close()
		}
	}
}

// Serve waits until ctx is cancelled or a listener fails; the error is the
// listener's.
func (d *Daemon) Serve(ctx context.Context) error {
	select {
	case <-ctx.Done():
		d.log.Info("shutting down: draining jobs and requests (signal again to force)")
		return nil
	case err := <-d.errc:
		d.log.Error("serve", "err", err)
		return err
	}
}

// Close drains: running jobs are cancelled and recorded as interrupted, then
// the builtins close, open requests finish, the socket is removed and the
// store and lock are released.
func (d *Daemon) Close() {
	d.release()
	d.log.Info("massd stopped")
}

// release runs the closers in reverse order of acquisition.
func (d *Daemon) release() {
	for i := len(d.closers) - 1; i >= 0; i-- {
		d.closers[i]()
	}
	d.closers = nil
}

// ListenUnix listens on a unix socket at path with mode 0600, creating its
// directory (0700) if needed. An existing file there is removed only if it
// is a socket nobody accepts on (connecting is refused).
func ListenUnix(path string) (net.Listener, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create socket dir: %w", err)
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("%s exists and is not a socket; remove it or choose another --socket", path)
		}
		conn, err := net.DialTimeout("unix", path, time.Second)
		switch {
		case err == nil:
			conn.Close()
			return nil, fmt.Errorf("another massd is serving on %s; stop it or choose another --socket", path)
		case errors.Is(err, unix.ECONNREFUSED):
			if err := os.Remove(path); err != nil {
				return nil, fmt.Errorf("remove stale socket %s: %w", path, err)
			}
		default:
			return nil, fmt.Errorf("probe existing socket %s: %w; remove it if no massd uses it", path, err)
		}
	}
	old := unix.Umask(0o177)
	ln, err := net.Listen("unix", path)
	unix.Umask(old)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("chmod %s: %w", path, err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	return ln, nil
}

// lockDataDir takes an exclusive lock so two daemons never share a data
// directory. The kernel releases it if massd dies.
func lockDataDir(l datadir.Layout) (func(), error) {
	dir, p := l.Root, l.Lock()
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock %s: %w", p, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("data dir %s is in use by another massd (lock %s): %w", dir, p, err)
	}
	return func() { f.Close() }, nil
}

func readToken(p string) (string, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return "", fmt.Errorf("read tcp token: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("tcp token file %s is readable by others (mode %v); chmod 600 it", p, fi.Mode().Perm())
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return "", fmt.Errorf("read tcp token: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if len(tok) < 16 {
		return "", fmt.Errorf("tcp token in %s is shorter than 16 characters; use e.g. `openssl rand -hex 32`", p)
	}
	return tok, nil
}

// NewLogger builds the daemon's logger from the log settings.
func NewLogger(l config.Log, w *os.File) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(l.Level))
	opts := &slog.HandlerOptions{Level: level}
	if l.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
