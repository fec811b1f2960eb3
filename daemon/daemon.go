// Package daemon assembles massd: it locks the data directory, opens the
// store, starts the job manager, serves the API on a unix socket (and
// optionally TCP with a bearer token) and drains everything on shutdown.
package daemon

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mass-dev/mass/daemon/config"
	"github.com/mass-dev/mass/daemon/jobs"
	"github.com/mass-dev/mass/daemon/server"
	"github.com/mass-dev/mass/daemon/store"
	"github.com/mass-dev/mass/datadir"
)

// DBName is the database file inside the data directory.
const DBName = datadir.DBFile

// Options configure a Daemon.
type Options struct {
	Config  *config.Config
	Version string
	Kinds   []jobs.Kind
	Logger  *slog.Logger
	// ReapOrphans, if set, runs once at start-up before any job is resumed:
	// the sandbox runtime removes containers and volumes a crashed massd
	// left behind. An error is logged, not fatal.
	ReapOrphans func(ctx context.Context) error
	// ShutdownTimeout bounds how long the drain waits for running jobs and
	// open requests; default 30s.
	ShutdownTimeout time.Duration
}

// Run starts massd and serves until ctx is cancelled, then drains: running
// jobs are cancelled and recorded as interrupted, open requests finish, and
// the socket is removed.
func Run(ctx context.Context, o Options) error {
	c := o.Config
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	if o.ShutdownTimeout <= 0 {
		o.ShutdownTimeout = 30 * time.Second
	}
	if err := os.MkdirAll(c.DataDir, 0o750); err != nil {
		return fmt.Errorf("create data dir: %w", err)
	}
	layout := datadir.New(c.DataDir)
	unlock, err := lockDataDir(layout)
	if err != nil {
		return err
	}
	defer unlock()
	st, err := store.Open(ctx, layout.DB())
	if err != nil {
		return err
	}
	defer st.Close()

	if err := server.SweepTasks(ctx, st, layout, log); err != nil {
		log.Warn("sweep unfinished task uploads", "err", err)
	}
	if o.ReapOrphans != nil {
		if err := o.ReapOrphans(ctx); err != nil {
			log.Warn("reap orphaned sandboxes", "err", err)
		}
	}
	mgr, err := jobs.NewManager(jobs.Options{Store: st, Kinds: o.Kinds, Concurrency: c.Jobs.Concurrency, Layout: layout, Logger: log})
	if err != nil {
		return err
	}
	if err := mgr.Start(ctx); err != nil {
		return err
	}
	var rnd [4]byte
	rand.Read(rnd[:])
	srv := server.New(server.Options{Store: st, Jobs: mgr, Layout: layout, Version: o.Version, DaemonID: hex.EncodeToString(rnd[:]), Logger: log})

	ln, err := ListenUnix(c.Socket)
	if err != nil {
		mgr.Close(context.Background())
		return err
	}
	defer os.Remove(c.Socket)
	// Requests see baseCtx, cancelled at shutdown so that event streams end.
	baseCtx, cancelBase := context.WithCancel(context.Background())
	defer cancelBase()
	base := func(net.Listener) context.Context { return baseCtx }
	servers := []*http.Server{{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second, BaseContext: base}}
	listeners := []net.Listener{ln}
	if c.TCP.Listen != "" {
		token, err := readToken(c.TCP.TokenFile)
		if err != nil {
			ln.Close()
			mgr.Close(context.Background())
			return err
		}
		tl, err := net.Listen("tcp", c.TCP.Listen)
		if err != nil {
			ln.Close()
			mgr.Close(context.Background())
			return fmt.Errorf("listen on tcp %s: %w", c.TCP.Listen, err)
		}
		servers = append(servers, &http.Server{Handler: srv.TokenHandler(token), ReadHeaderTimeout: 10 * time.Second, BaseContext: base})
		listeners = append(listeners, tl)
		log.Info("listening", "tcp", tl.Addr().String())
	}
	errc := make(chan error, len(servers))
	for i := range servers {
		go func(s *http.Server, l net.Listener) {
			if err := s.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errc <- err
			}
		}(servers[i], listeners[i])
	}
	for name, m := range c.Models {
		log.Info("model endpoint", "name", name, "endpoint", m)
	}
	log.Info("massd ready", "version", o.Version, "socket", c.Socket, "data_dir", c.DataDir, "kinds", strings.Join(mgr.KindNames(), ","))

	var serveErr error
	select {
	case <-ctx.Done():
		log.Info("shutting down: draining jobs and requests (signal again to force)")
	case serveErr = <-errc:
		log.Error("serve", "err", serveErr)
	}
	drain, cancel := context.WithTimeout(context.Background(), o.ShutdownTimeout)
	defer cancel()
	if err := mgr.Close(drain); err != nil {
		log.Warn("drain jobs", "err", err)
	}
	cancelBase()
	for _, s := range servers {
		if err := s.Shutdown(drain); err != nil {
			s.Close()
		}
	}
	log.Info("massd stopped")
	return serveErr
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
