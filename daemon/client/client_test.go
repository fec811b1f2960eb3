package client_test

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mass-dev/mass/daemon"
	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/client"
	"github.com/mass-dev/mass/daemon/config"
	"github.com/mass-dev/mass/daemon/daemontest"
	"github.com/mass-dev/mass/daemon/jobs"
	"github.com/mass-dev/mass/jobkind"
)

// startDaemon runs massd in-process on a temporary socket, with configure
// (if any) applied to its config, and waits until it answers.
func startDaemon(t *testing.T, configure ...func(*config.Config)) (*client.Client, string) {
	t.Helper()
	cfg := daemontest.Config(t)
	for _, f := range configure {
		f(cfg)
	}
	d := daemontest.Start(t, daemon.Options{Config: cfg, Version: "t", Kinds: []jobkind.Kind{jobs.WaitKind()}})
	return d.Client, cfg.DataDir
}

func TestNoDaemon(t *testing.T) {
	cl := client.New(filepath.Join(t.TempDir(), "none.sock"))
	if _, err := cl.Health(context.Background()); !errors.Is(err, client.ErrNoDaemon) {
		t.Errorf("Health = %v, want ErrNoDaemon", err)
	}
}

func TestRoundTrip(t *testing.T) {
	cl, dataDir := startDaemon(t)
	ctx := context.Background()
	task, err := cl.AddTask(ctx, "../../examples/tasks/ml-classifier/task.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "tasks", "ml-classifier", "eval", "score.py")); err != nil {
		t.Errorf("input not stored: %v", err)
	}
	if _, err := cl.AddTask(ctx, "../../examples/tasks/ml-classifier/task.yaml"); !errors.Is(err, api.ErrConflict) {
		t.Errorf("second AddTask = %v, want ErrConflict", err)
	}
	if _, err := cl.Task(ctx, "nope"); !errors.Is(err, api.ErrNotFound) {
		t.Errorf("Task(nope) = %v, want ErrNotFound", err)
	}
	res, err := cl.ValidateTask(ctx, []byte("id: x\nprompt: p\nlimits: {agent_turns: 2}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if res.OK || len(res.Errors) != 1 {
		t.Errorf("ValidateTask = %+v, want one error", res)
	}
	j, err := cl.SubmitJob(ctx, api.JobRequest{Kind: "wait", TaskID: task.ID, Params: []byte(`{"seconds":0.1,"interval_ms":20}`)})
	if err != nil {
		t.Fatal(err)
	}
	var events, snaps int
	var last api.Job
	err = cl.Follow(ctx, j.ID, 0, func(it api.StreamItem) error {
		if it.Event != nil {
			events++
		}
		if it.Job != nil {
			snaps++
			last = *it.Job
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if last.State != api.StateSucceeded || int64(events) != last.LastSeq || snaps < 2 {
		t.Errorf("followed %d events, %d snapshots, last %+v", events, snaps, last)
	}
	tail, err := cl.Events(ctx, j.ID, last.LastSeq-1)
	if err != nil || len(tail) != 1 || tail[0].Type != api.StateSucceeded {
		t.Errorf("Events(after) = %+v, %v", tail, err)
	}

	// Episode files are served from the data dir.
	ep := filepath.Join(dataDir, "episodes", "ep-x")
	if err := os.MkdirAll(ep, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ep, "run_status.json"), []byte(`{"success":true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	rc, err := cl.EpisodeFile(ctx, "ep-x", "run_status.json")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(rc)
	rc.Close()
	if got, want := string(b), `{"success":true}`; got != want {
		t.Errorf("EpisodeFile = %q, want %q", got, want)
	}
	if _, err := cl.EpisodeFile(ctx, "ep-x", "secret"); !errors.Is(err, api.ErrNotFound) {
		t.Errorf("EpisodeFile(secret) = %v, want ErrNotFound", err)
	}
	if _, err := cl.Episode(ctx, "ep-x"); !errors.Is(err, api.ErrNotFound) {
		t.Errorf("Episode without a row = %v, want ErrNotFound", err)
	}
}

// TestTCPToken reaches massd over its TCP listener with NewTCP: the right
// bearer token is served, a wrong one is api.ErrUnauthorized.
func TestTCPToken(t *testing.T) {
	const token = "0123456789abcdef0123456789abcdef"
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := free.Addr().String()
	free.Close()
	// The TCP listener is bound before massd answers on its socket.
	startDaemon(t, func(c *config.Config) { c.TCP.Listen, c.TCP.TokenFile = addr, tokenFile })
	ctx := context.Background()
	cl := client.NewTCP("http://"+addr+"/", token)
	if h, err := cl.Health(ctx); err != nil || h.Status != "ok" {
		t.Fatalf("Health over tcp = %+v, %v", h, err)
	}
	m, err := cl.Metrics(ctx)
	if err != nil || !strings.Contains(m, `mass_build_info{version="t"`) {
		t.Errorf("Metrics = %.200q, %v; want build info", m, err)
	}
	if _, err := client.NewTCP("http://"+addr, "wrong-token-wrong-token").Health(ctx); !errors.Is(err, api.ErrUnauthorized) {
		t.Errorf("Health with a wrong token = %v, want ErrUnauthorized", err)
	}
}
