package docker

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/helper"
)

// fakeHelper is one scripted serve session speaking the engine's
// multiplexed stream: it reads a request frame, then does whatever act
// says with stdout (the multiplexed writer) and the raw connection.
type fakeHelper func(t *testing.T, req []byte, stdout io.Writer, c net.Conn)

// answer replies with a valid empty OK response and keeps serving.
func answer(t *testing.T, req []byte, stdout io.Writer, c net.Conn) {
	if err := helper.WriteFrame(stdout, []byte(`{"ok":true}`)); err != nil {
		t.Logf("fake helper: %v", err)
	}
}

// fakeOps returns fileOps whose sessions follow acts in turn (the last one
// repeats), and counters of requests received and aborts.
func fakeOps(t *testing.T, acts ...fakeHelper) (f *fileOps, requests, aborts *atomic.Int64) {
	requests, aborts = new(atomic.Int64), new(atomic.Int64)
	var n atomic.Int64
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait)
	start := func(ctx context.Context) (*helperSession, error) {
		act := acts[min(int(n.Add(1))-1, len(acts)-1)]
		host, fake := net.Pipe()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer fake.Close()
			stdout := stdcopy.NewStdWriter(fake, stdcopy.Stdout)
			in := bufio.NewReader(fake)
			for {
				req, err := helper.ReadFrame(in, helper.MaxRequestBytes)
				if err != nil {
					return
				}
				requests.Add(1)
				act(t, req, stdout, fake)
			}
		}()
		return newHelperSession(types.HijackedResponse{Conn: host, Reader: bufio.NewReader(host)}), nil
	}
	f = newFileOps(start, func(context.Context) { aborts.Add(1) })
	t.Cleanup(func() { f.reset(true) })
	return f, requests, aborts
}

// die closes the connection after reading the request: delivery uncertain.
func die(t *testing.T, req []byte, stdout io.Writer, c net.Conn) { c.Close() }

func hang(t *testing.T, req []byte, stdout io.Writer, c net.Conn) {
	_, _ = io.Copy(io.Discard, c) // until the host closes
}

func garbage(t *testing.T, req []byte, stdout io.Writer, c net.Conn) {
	_, _ = stdout.Write([]byte("this is not a frame\n"))
	c.Close()
}

func oversized(t *testing.T, req []byte, stdout io.Writer, c net.Conn) {
	_, _ = stdout.Write(binary.BigEndian.AppendUint32(nil, 1<<32-1))
}

// flood announces a small frame and then writes far more than the host buffers.
func flood(t *testing.T, req []byte, stdout io.Writer, c net.Conn) {
	_ = helper.WriteFrame(stdout, []byte(`{"ok":true}`))
	chunk := make([]byte, 1<<20)
	for i := 0; i < 64; i++ {
		if _, err := stdout.Write(chunk); err != nil {
			return
		}
	}
	t.Errorf("fake helper wrote 64 MiB without the host closing the session")
}

func TestFileOpsSession(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name         string
		acts         []fakeHelper
		op           string
		wantErr      error // nil: success
		wantStarts   int64
		wantRequests int64
		wantAborts   int64
	}{
		{"reuse", []fakeHelper{answer}, helper.OpRead, nil, 1, 3, 0},
		{"read retried after death", []fakeHelper{die, answer}, helper.OpRead, nil, 2, 4, 0},
		{"write not repeated after death", []fakeHelper{die, answer}, helper.OpWrite, sandbox.ErrUnavailable, 1, 1, 0},
		{"edit not repeated after garbage", []fakeHelper{garbage, answer}, helper.OpEdit, sandbox.ErrUnavailable, 1, 1, 0},
		{"read retried after garbage", []fakeHelper{garbage, answer}, helper.OpStat, nil, 2, 4, 0},
		{"oversized frame", []fakeHelper{oversized, answer}, helper.OpGrep, nil, 2, 4, 0},
		{"oversized frame on write", []fakeHelper{oversized}, helper.OpWrite, sandbox.ErrTooLarge, 1, 1, 0},
		{"retried once only", []fakeHelper{die}, helper.OpList, sandbox.ErrUnavailable, 2, 2, 0},
		{"hang times out", []fakeHelper{hang}, helper.OpRead, sandbox.ErrTimeout, 1, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, requests, aborts := fakeOps(t, tt.acts...)
			n := 3
			if tt.wantErr != nil {
				n = 1
			}
			for i := 0; i < n; i++ {
				_, err := f.do(ctx, tt.op, []byte(`{"op":"`+tt.op+`"}`), 300*time.Millisecond)
				if tt.wantErr == nil && err != nil {
					t.Fatalf("op %d: %v", i, err)
				}
				if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
					t.Fatalf("op %d: err = %v, want %v", i, err, tt.wantErr)
				}
			}
			if got, want := f.started.Load(), tt.wantStarts; got != want {
				t.Errorf("sessions started = %d, want %d", got, want)
			}
			if got, want := requests.Load(), tt.wantRequests; got != want {
				t.Errorf("requests delivered = %d, want %d", got, want)
			}
			if got, want := aborts.Load(), tt.wantAborts; got != want {
				t.Errorf("aborts = %d, want %d", got, want)
			}
		})
	}
}

// A session that is known dead before a write is replaced, so the write
// goes out exactly once and succeeds.
func TestFileOpsWriteAfterDeath(t *testing.T) {
	f, requests, _ := fakeOps(t, answer)
	ctx := context.Background()
	if _, err := f.do(ctx, helper.OpStat, []byte(`{}`), time.Second); err != nil {
		t.Fatal(err)
	}
	s := f.cur
	s.conn.Close() // as if the agent killed the helper
	<-s.done
	if _, err := f.do(ctx, helper.OpWrite, []byte(`{}`), time.Second); err != nil {
		t.Fatalf("write after the helper died: %v", err)
	}
	if got, want := requests.Load(), int64(2); got != want {
		t.Errorf("requests delivered = %d, want %d", got, want)
	}
	if got, want := f.started.Load(), int64(2); got != want {
		t.Errorf("sessions started = %d, want %d", got, want)
	}
}

// A flood of output is cut at the buffer cap instead of blocking the demux
// or growing without bound; the session is then replaced.
func TestFileOpsFlood(t *testing.T) {
	f, _, _ := fakeOps(t, flood, answer)
	ctx := context.Background()
	if _, err := f.do(ctx, helper.OpRead, []byte(`{}`), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	s := f.cur
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		t.Fatal("flooding session still open")
	}
	if _, err := f.do(ctx, helper.OpRead, []byte(`{}`), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if got, want := f.started.Load(), int64(2); got != want {
		t.Errorf("sessions started = %d, want %d", got, want)
	}
}

func TestFileOpsCancel(t *testing.T) {
	f, _, aborts := fakeOps(t, hang)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	if _, err := f.do(ctx, helper.OpRead, []byte(`{}`), time.Minute); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled op: %v, want context.Canceled", err)
	}
	if aborts.Load() != 1 || f.cur != nil {
		t.Errorf("aborts = %d, session kept = %v; want 1 abort and the session dropped", aborts.Load(), f.cur != nil)
	}
}

// FuzzSessionResponse feeds arbitrary helper output through the host's
// demux and frame reader: it must return (within the caps) and never hang.
func FuzzSessionResponse(f *testing.F) {
	f.Add([]byte{0, 0, 0, 11, '{', '"', 'o', 'k', '"', ':', 't', 'r', 'u', 'e', '}'})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0, 0, 1})
	f.Fuzz(func(t *testing.T, out []byte) {
		host, fake := net.Pipe()
		go func() {
			defer fake.Close()
			if _, err := helper.ReadFrame(fake, helper.MaxRequestBytes); err != nil {
				return
			}
			_, _ = stdcopy.NewStdWriter(fake, stdcopy.Stdout).Write(out)
		}()
		s := newHelperSession(types.HijackedResponse{Conn: host, Reader: bufio.NewReader(host)})
		defer s.close()
		resp, _, err := s.roundTrip([]byte(`{"op":"stat"}`))
		if err == nil && (len(resp) > helper.MaxResponseBytes || len(resp)+4 > len(out)) {
			t.Fatalf("response of %d bytes from %d bytes of output", len(resp), len(out))
		}
	})
}

// When the helper dies between ops without the host having seen it yet,
// the liveness probe before a write takes the hit, not the write.
func TestFileOpsPingBeforeWrite(t *testing.T) {
	var n atomic.Int64
	answerOnce := func(t *testing.T, req []byte, stdout io.Writer, c net.Conn) {
		if n.Add(1) == 1 {
			answer(t, req, stdout, c)
			return
		}
		c.Close()
	}
	f, requests, _ := fakeOps(t, answerOnce, answer)
	ctx := context.Background()
	if _, err := f.do(ctx, helper.OpStat, []byte(`{}`), time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := f.do(ctx, helper.OpWrite, []byte(`{"op":"write"}`), time.Second); err != nil {
		t.Fatalf("write: %v", err)
	}
	if got, want := requests.Load(), int64(3); got != want { // stat, ping (lost), write
		t.Errorf("requests delivered = %d, want %d", got, want)
	}
}
