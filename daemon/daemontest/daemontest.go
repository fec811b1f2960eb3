// Package daemontest runs massd in-process for tests: a temporary socket
// and data directory, the job kinds the test names, and a wait until the
// API answers. The daemon stops when the test ends.
package daemontest

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/mass-dev/mass/daemon"
	"github.com/mass-dev/mass/daemon/client"
	"github.com/mass-dev/mass/daemon/config"
)

// StartTimeout bounds the wait for the API to answer.
const StartTimeout = 10 * time.Second

// Daemon is a massd running in this process.
type Daemon struct {
	Config *config.Config
	Client *client.Client

	cancel context.CancelFunc
	exited chan struct{} // closed when Run returned; err is then set
	err    error
}

// Config is the default configuration on a socket and a data directory
// under tb.TempDir().
func Config(tb testing.TB) *config.Config {
	tb.Helper()
	dir := tb.TempDir()
	cfg := config.Default()
	cfg.Socket, cfg.DataDir = filepath.Join(dir, "massd.sock"), filepath.Join(dir, "data")
	return cfg
}

// Start runs daemon.Run with o in a goroutine and returns once the API
// answers /v1/healthz. An unset o.Config is Config(tb), an unset logger
// discards and an unset version is "test". The daemon stops at the test's
// cleanup, where an error of Run fails the test; Stop stops it earlier.
func Start(tb testing.TB, o daemon.Options) *Daemon {
	tb.Helper()
	if o.Config == nil {
		o.Config = Config(tb)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Version == "" {
		o.Version = "test"
	}
	ctx, cancel := context.WithCancel(context.Background())
	d := &Daemon{Config: o.Config, Client: client.New(o.Config.Socket), cancel: cancel, exited: make(chan struct{})}
	go func() {
		d.err = daemon.Run(ctx, o)
		close(d.exited)
	}()
	tb.Cleanup(func() {
		if err := d.Stop(); err != nil {
			tb.Errorf("daemon.Run: %v", err)
		}
	})
	deadline := time.Now().Add(StartTimeout)
	for {
		if _, err := d.Client.Health(context.Background()); err == nil {
			return d
		}
		select {
		case <-d.exited:
			tb.Fatalf("daemon exited before it answered: %v", d.err)
		default:
		}
		if time.Now().After(deadline) {
			tb.Fatalf("daemon did not answer within %s", StartTimeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Stop cancels the daemon's context and returns Run's error once it
// returned. It may be called more than once.
func (d *Daemon) Stop() error {
	d.cancel()
	<-d.exited
	return d.err
}

// Cancel starts the shutdown without waiting for it; Exited tells when it
// is over.
func (d *Daemon) Cancel() { d.cancel() }

// Exited is closed once Run returned; Err is then its error.
func (d *Daemon) Exited() <-chan struct{} { return d.exited }

// Err is Run's error; valid once Exited is closed.
func (d *Daemon) Err() error { return d.err }
