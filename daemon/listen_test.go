package daemon_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mass-dev/mass/daemon"
	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/daemontest"
	"github.com/mass-dev/mass/daemon/jobs"
	"github.com/mass-dev/mass/jobkind"
)

func TestListenUnix(t *testing.T) {
	dir := t.TempDir()

	// A fresh path in a new directory: created 0600.
	fresh := filepath.Join(dir, "sub", "a.sock")
	ln, err := daemon.ListenUnix(fresh)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(fresh)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fi.Mode().Perm(), os.FileMode(0o600); got != want {
		t.Errorf("socket mode = %v, want %v", got, want)
	}

	// A live socket is never taken over.
	if _, err := daemon.ListenUnix(fresh); err == nil || !strings.Contains(err.Error(), "another massd") {
		t.Errorf("listen on a live socket: %v, want 'another massd'", err)
	}
	ln.Close()

	// A dead socket (nobody accepts) is replaced.
	l2, err := daemon.ListenUnix(fresh)
	if err != nil {
		t.Fatalf("listen over a stale socket: %v", err)
	}
	l2.Close()

	// A regular file is never removed.
	plain := filepath.Join(dir, "plain.sock")
	if err := os.WriteFile(plain, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := daemon.ListenUnix(plain); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Errorf("listen over a regular file: %v, want 'not a socket'", err)
	}
	if b, _ := os.ReadFile(plain); string(b) != "keep" {
		t.Error("regular file was touched")
	}
}

// TestShutdownEndsStreams: a follower of a job that never runs must not
// hold up the daemon's shutdown.
func TestShutdownEndsStreams(t *testing.T) {
	cfg := daemontest.Config(t)
	cfg.Jobs.Concurrency = 1
	d := daemontest.Start(t, daemon.Options{Config: cfg, Kinds: []jobkind.Kind{jobs.WaitKind()}, ShutdownTimeout: time.Minute})
	cl := d.Client
	bg := context.Background()
	if _, err := cl.SubmitJob(bg, api.JobRequest{Kind: "wait", Params: []byte(`{"seconds":600}`)}); err != nil {
		t.Fatal(err)
	}
	queued, err := cl.SubmitJob(bg, api.JobRequest{Kind: "wait", Params: []byte(`{"seconds":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	streamDone := make(chan error, 1)
	go func() { streamDone <- cl.Follow(bg, queued.ID, 0, func(api.StreamItem) error { return nil }) }()
	time.Sleep(200 * time.Millisecond)
	d.Cancel()
	select {
	case <-d.Exited():
		if err := d.Err(); err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("daemon did not stop while a stream was open")
	}
	<-streamDone
}
