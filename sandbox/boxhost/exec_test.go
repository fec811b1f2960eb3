package boxhost

import (
	"context"
	"errors"
	"io"
	"reflect"
	"testing"
	"time"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/helper"
)

func TestNewCommand(t *testing.T) {
	pol := sandbox.DefaultPolicy()
	pol.ExecTimeout, pol.OutputBytes = 7*time.Second, 99
	tests := []struct {
		name string
		req  sandbox.ExecRequest
		pol  sandbox.Policy
		want Command
	}{
		{"policy defaults", sandbox.ExecRequest{Argv: []string{"ls"}}, pol,
			Command{Argv: []string{"ls"}, Timeout: 7 * time.Second, MaxBytes: 99, Dir: sandbox.WorkspaceMount}},
		{"request wins", sandbox.ExecRequest{Argv: []string{"ls"}, Timeout: time.Second, MaxBytes: 5, Dir: "src"}, pol,
			Command{Argv: []string{"ls"}, Timeout: time.Second, MaxBytes: 5, Dir: sandbox.WorkspaceMount + "/src"}},
		{"absolute dir", sandbox.ExecRequest{Argv: []string{"ls"}, Dir: "/tmp"}, pol,
			Command{Argv: []string{"ls"}, Timeout: 7 * time.Second, MaxBytes: 99, Dir: "/tmp"}},
		{"default policy's timeout", sandbox.ExecRequest{Argv: []string{"ls"}}, sandbox.Policy{},
			Command{Argv: []string{"ls"}, Timeout: sandbox.DefaultPolicy().ExecTimeout, Dir: sandbox.WorkspaceMount}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := NewCommand(tt.req, tt.pol)
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
	if _, err := NewCommand(sandbox.ExecRequest{Argv: []string{""}}, pol); !errors.Is(err, sandbox.ErrInvalid) {
		t.Errorf("empty argv: %v, want ErrInvalid", err)
	}
}

func TestCommandWrapped(t *testing.T) {
	c := Command{Argv: []string{"sh", "-c", "true"}, Timeout: 3 * time.Second}
	got := c.Wrapped("-dir", "/x")
	want := []string{sandbox.HelperMount, "exec", "-timeout", "3s", "-dir", "/x", "--", "sh", "-c", "true"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("wrapped %q, want %q", got, want)
	}
	if got, want := c.HostTimeout(), 3*time.Second+HostGrace; got != want {
		t.Errorf("host timeout %v, want %v", got, want)
	}
	for _, tt := range []struct {
		res  sandbox.ExecResult
		want bool
	}{
		{sandbox.ExecResult{ExitCode: helper.ExitTimedOut, Duration: 3 * time.Second}, true},
		{sandbox.ExecResult{ExitCode: helper.ExitTimedOut, Duration: time.Second}, false}, // the command's own exit code
		{sandbox.ExecResult{ExitCode: 0, Duration: time.Minute}, false},
	} {
		if got := c.Result(tt.res).TimedOut; got != tt.want {
			t.Errorf("Result(%+v).TimedOut = %v, want %v", tt.res, got, tt.want)
		}
	}
}

func TestCapWriter(t *testing.T) {
	c := &CapWriter{Max: 4}
	for _, s := range []string{"ab", "cde", "f"} {
		if n, err := c.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("write %q: %d, %v", s, n, err)
		}
	}
	if got := string(c.Bytes()); got != "abcd" || !c.Truncated() {
		t.Errorf("kept %q truncated %v, want abcd true", got, c.Truncated())
	}
}

// stream is an exec stream that ends on its own after end is closed, or
// with io.ErrClosedPipe when stopped.
type stream struct {
	done    chan error
	stopped chan struct{}
}

func newStream(end <-chan struct{}, err error) *stream {
	s := &stream{done: make(chan error, 1), stopped: make(chan struct{})}
	go func() {
		select {
		case <-end:
			s.done <- err
		case <-s.stopped:
			s.done <- io.ErrClosedPipe
		}
	}()
	return s
}

func (s *stream) stop() { close(s.stopped) }

func TestAwaitStream(t *testing.T) {
	never := make(chan struct{})
	ended := make(chan struct{})
	close(ended)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name        string
		ctx         context.Context
		end         <-chan struct{}
		streamErr   error
		hostTimeout time.Duration
		timedOut    bool
		aborted     bool
		err         error // nil: either (the stream's end and its stop race)
	}{
		{"ends by itself", context.Background(), ended, io.EOF, time.Hour, false, false, io.EOF},
		{"fails by itself", context.Background(), ended, io.ErrUnexpectedEOF, 0, false, false, io.ErrUnexpectedEOF},
		{"host timeout", context.Background(), never, nil, time.Millisecond, true, true, io.ErrClosedPipe},
		{"cancelled", cancelled, never, nil, 0, false, true, io.ErrClosedPipe},
		{"fails as ctx ends", cancelled, ended, io.ErrUnexpectedEOF, 0, false, true, nil},
		{"ends cleanly as ctx ends", cancelled, ended, io.EOF, 0, false, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStream(tt.end, tt.streamErr)
			if tt.end == ended {
				<-time.After(10 * time.Millisecond) // the stream has ended before the wait
			}
			aborts := 0
			got := AwaitStream(tt.ctx, s.done, tt.hostTimeout, time.Second, func(actx context.Context) {
				if actx.Err() != nil {
					t.Error("onAbort got an ended context")
				}
				aborts++
			}, s.stop)
			if tt.name == "ends cleanly as ctx ends" {
				// select may take ctx.Done first: then it is an abort.
				tt.aborted = got.Aborted
			}
			if got.TimedOut != tt.timedOut || got.Aborted != tt.aborted || (tt.err != nil && got.Err != tt.err) {
				t.Errorf("got %+v, want timedOut %v aborted %v err %v", got, tt.timedOut, tt.aborted, tt.err)
			}
			want := 0
			if tt.aborted {
				want = 1
			}
			if aborts != want {
				t.Errorf("onAbort ran %d times, want %d", aborts, want)
			}
		})
	}
}
