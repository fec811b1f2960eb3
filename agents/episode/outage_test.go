package episode

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/client"

	"github.com/mass-dev/mass/agents/model/fakeopenai"
	"github.com/mass-dev/mass/sandbox/docker"
	"github.com/mass-dev/mass/sandbox/image"
)

// engineProxy forwards a unix socket to the real Docker engine's; Stop
// makes the engine unreachable (listener and every open connection
// closed), Start brings it back. The real dockerd is never touched.
type engineProxy struct {
	path, target string
	mu           sync.Mutex
	ln           net.Listener
	conns        map[net.Conn]bool
}

func (p *engineProxy) Start(t testing.TB) {
	t.Helper()
	os.Remove(p.path)
	ln, err := net.Listen("unix", p.path)
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("unix", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns[c], p.conns[up] = true, true
			p.mu.Unlock()
			go func() { io.Copy(up, c); up.Close() }()
			go func() { io.Copy(c, up); c.Close() }()
		}
	}()
}

func (p *engineProxy) Stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ln.Close()
	for c := range p.conns {
		c.Close()
	}
	p.conns = map[net.Conn]bool{}
}

// outageRuntime is a Docker runtime (same daemon id as the tests' own, so
// leftovers sees its objects) that reaches the engine through a proxy.
func outageRuntime(t *testing.T) (*docker.Runtime, *engineProxy) {
	t.Helper()
	p := &engineProxy{path: filepath.Join(t.TempDir(), "engine.sock"), target: "/var/run/docker.sock", conns: map[net.Conn]bool{}}
	p.Start(t)
	t.Cleanup(p.Stop)
	cli, err := client.NewClientWithOpts(client.WithHost("unix://"+p.path), client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	rt, err := docker.New(context.Background(), docker.Config{
		DaemonID: fmt.Sprintf("c1test%d", os.Getpid()), HelperPath: testHelper, Image: image.TestRef, Logger: quiet, Client: cli,
	})
	if err != nil {
		t.Fatal(err)
	}
	return rt, p
}

// Defect 5: after the engine went away mid-episode, its containers and
// volumes survived for the daemon's lifetime. An outage shorter than the
// cleanup budget is ridden out by retries; a longer one is cleaned by the
// periodic reaper once the engine is back.
func TestEngineOutageLeavesNothing(t *testing.T) {
	needEngine(t)
	for _, tc := range []struct {
		name   string
		outage time.Duration
		budget time.Duration
		reaper bool
	}{
		{"retried", 2 * time.Second, 30 * time.Second, false},
		{"reaped", 4 * time.Second, time.Second, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt, proxy := outageRuntime(t)
			back := make(chan struct{})
			policy := func(r *fakeopenai.Request) fakeopenai.Reply {
				if r.Turn() == 0 {
					return calls(sh("echo hi > /workspace/a.txt"))
				}
				if r.Turn() == 1 {
					proxy.Stop() // the engine goes away before the episode ends
					go func() { time.Sleep(tc.outage); proxy.Start(t); close(back) }()
				}
				return fakeopenai.Reply{Content: "done"}
			}
			d, _ := fakeModel(t, policy, nil)
			d.Runtime, d.CleanupBudget = rt, tc.budget
			spec := testTask(t, 2*time.Minute)
			st, _ := Run(context.Background(), d, Options{Task: spec, TaskID: spec.ID, Model: "fake", Dir: filepath.Join(t.TempDir(), "ep")})
			<-back
			if !tc.reaper {
				if left := leftovers(t, st.EpisodeID); len(left) != 0 {
					t.Fatalf("after a %s outage within the cleanup budget: %d objects left: %v", tc.outage, len(left), left)
				}
				return
			}
			if len(leftovers(t, st.EpisodeID)) == 0 {
				t.Fatal("nothing was left behind; the outage did not outlast the cleanup budget")
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go Reap(ctx, rt, 200*time.Millisecond, quiet)
			deadline := time.Now().Add(30 * time.Second)
			for len(leftovers(t, st.EpisodeID)) != 0 {
				if time.Now().After(deadline) {
					t.Fatalf("the periodic reaper left %v", leftovers(t, st.EpisodeID))
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
	}
}
