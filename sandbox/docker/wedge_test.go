package docker

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mass-dev/mass/sandbox"
)

// swallowProxy sits in front of the real engine's unix socket and forwards
// every connection byte for byte, except that the first request matching
// match is read and never answered (nor forwarded): a wedged engine, or a
// reply lost on the way.
type swallowProxy struct {
	path     string
	upstream string
	match    func(*http.Request) bool

	mu        sync.Mutex
	swallowed []string
}

func startSwallowProxy(t *testing.T, upstream string, match func(*http.Request) bool) *swallowProxy {
	t.Helper()
	dir, err := os.MkdirTemp("", "wedge")
	if err != nil {
		t.Fatal(err)
	}
	p := &swallowProxy{path: filepath.Join(dir, "engine.sock"), upstream: upstream, match: match}
	ln, err := net.Listen("unix", p.path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ln.Close()
		os.RemoveAll(dir)
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
	return p
}

func (p *swallowProxy) serve(c net.Conn) {
	defer c.Close()
	up, err := net.Dial("unix", p.upstream)
	if err != nil {
		return
	}
	defer up.Close()
	br, upr := bufio.NewReader(c), bufio.NewReader(up)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		p.mu.Lock()
		swallow := len(p.swallowed) == 0 && p.match(req)
		if swallow {
			p.swallowed = append(p.swallowed, req.Method+" "+req.URL.Path)
		}
		p.mu.Unlock()
		if swallow {
			io.Copy(io.Discard, req.Body)
			io.Copy(io.Discard, br) // held open, never answered, until the client gives up
			return
		}
		if err := req.Write(up); err != nil {
			return
		}
		resp, err := http.ReadResponse(upr, req)
		if err != nil {
			return
		}
		if err := resp.Write(c); err != nil {
			return
		}
		if resp.StatusCode == http.StatusSwitchingProtocols {
			go func() {
				io.Copy(up, br)
				if uc, ok := up.(*net.UnixConn); ok {
					uc.CloseWrite()
				}
			}()
			io.Copy(c, upr)
			return
		}
		if resp.Close || req.Close {
			return
		}
	}
}

func (p *swallowProxy) got() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.swallowed...)
}

// lockedBuffer is a log sink safe for the runtime's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// wedgedRuntime is a runtime on the real engine through a proxy that
// swallows the first request matching match.
func wedgedRuntime(t *testing.T, match func(*http.Request) bool) (*Runtime, *swallowProxy, *lockedBuffer) {
	t.Helper()
	rt := needEngine(t)
	host := rt.cli.DaemonHost()
	if !strings.HasPrefix(host, "unix://") {
		t.Skipf("engine at %s: the proxy needs a unix socket", host)
	}
	p := startSwallowProxy(t, strings.TrimPrefix(host, "unix://"), match)
	cli, err := NewClient("unix://"+p.path, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	logs := &lockedBuffer{}
	wrt, err := New(context.Background(), Config{DaemonID: fmt.Sprintf("wedge%d", os.Getpid()), HelperPath: testHelper, Image: testImage,
		Client: cli, EngineTimeout: 3 * time.Second, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		rt.ReapOrphans(context.Background(), func(string) bool { return false })
		wrt.Close()
		cli.Close()
	})
	return wrt, p, logs
}

// createWithin runs CreateWorkspace and fails the test if it is still
// blocked long after the engine deadline: on e9e71d1 a swallowed engine
// request held it until the episode's wall clock.
func createWithin(t *testing.T, rt *Runtime, ep string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute) // the examples' episode wall clock
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- rt.CreateWorkspace(ctx, sandbox.WorkspaceSpec{Episode: ep}, nil) }()
	select {
	case err := <-done:
		return err
	case <-time.After(2 * time.Minute):
		t.Fatal("CreateWorkspace still blocked 2 minutes after the engine swallowed a request (engine deadline 3s)")
		return nil
	}
}

// D2: the exec start/attach of the workspace's prepare step gets no answer;
// the handshake's deadline ends it, the wedge is logged and, the exec never
// having started, the attach is tried again and the workspace is made.
func TestSwallowedExecAttachIsRetried(t *testing.T) {
	rt, p, logs := wedgedRuntime(t, func(r *http.Request) bool {
		return r.Method == http.MethodPost && strings.Contains(r.URL.Path, "/exec/") && strings.HasSuffix(r.URL.Path, "/start")
	})
	ep := fmt.Sprintf("wedge-attach-%d", os.Getpid())
	if err := createWithin(t, rt, ep); err != nil {
		t.Fatalf("CreateWorkspace after one swallowed exec start: %v", err)
	}
	if got := p.got(); len(got) != 1 {
		t.Fatalf("swallowed %v: the proxy never saw an exec start, the test proves nothing", got)
	}
	if !strings.Contains(logs.String(), "did not answer an exec attach") {
		t.Errorf("the wedge was not logged:\n%s", logs)
	}
}

// D2: a plain engine call (the volume create) gets no answer; it fails
// after the deadline as unavailable (an infrastructure failure for the
// episode) instead of blocking.
func TestSwallowedEngineCallFailsUnavailable(t *testing.T) {
	rt, p, _ := wedgedRuntime(t, func(r *http.Request) bool {
		return r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/volumes/create")
	})
	err := createWithin(t, rt, fmt.Sprintf("wedge-volume-%d", os.Getpid()))
	if got := p.got(); len(got) != 1 {
		t.Fatalf("swallowed %v: the proxy never saw the volume create", got)
	}
	if !errors.Is(err, sandbox.ErrUnavailable) {
		t.Fatalf("CreateWorkspace with a swallowed volume create: %v, want ErrUnavailable", err)
	}
}
