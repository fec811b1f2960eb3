package episode

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mass-dev/mass/agents/model/fakeopenai"
	"github.com/mass-dev/mass/sandbox"
)

// admission is the real Docker runtime behind a wait for cluster capacity,
// as the kubernetes backend's CreateWorkspace waits when a pod is Pending
// or the API server answers 429: the workspace exists only after wait.
type admission struct {
	sandbox.Runtime
	wait time.Duration
}

func (a admission) CreateWorkspace(ctx context.Context, ws sandbox.WorkspaceSpec, inputs []sandbox.Input) error {
	t := time.NewTimer(a.wait)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	return a.Runtime.CreateWorkspace(ctx, ws, inputs)
}

// stages records the progress stages of an episode in order, the
// workspace stage with its message.
type stages struct {
	mu  sync.Mutex
	got []string
}

func (s *stages) observe(p Progress) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := p.Stage
	if st == "workspace" {
		st += ": " + p.Last
	}
	if n := len(s.got); n == 0 || s.got[n-1] != st {
		s.got = append(s.got, st)
	}
}

func (s *stages) list() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.got)
}

// The episode clock covers the agents' work, not the wait for admission: an
// episode whose workspace waits longer than its wall time for capacity
// still completes, the progress shows the wait as the workspace stage, and
// the clock still ends the agents' work that runs past it.
func TestWallClockStartsAfterAdmission(t *testing.T) {
	const wait, wall = 4 * time.Second, 3 * time.Second
	tests := []struct {
		name    string
		policy  fakeopenai.Policy
		success bool
	}{
		{"completes", script(), true}, // the orchestrator answers at once
		{"clock still ends the work", script(calls(sh("sleep 60"))), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, _ := fakeModel(t, tt.policy, nil)
			d.Runtime = admission{Runtime: d.Runtime, wait: wait}
			spec := testTask(t, wall)
			var seen stages
			start := time.Now()
			st, err := Run(context.Background(), d, Options{Task: spec, TaskID: spec.ID, Model: "fake",
				Dir: filepath.Join(t.TempDir(), "ep"), Observe: seen.observe})
			if err != nil {
				t.Fatal(err)
			}
			took := time.Since(start)
			if tt.success {
				if !st.Success || st.Exit != ExitCompleted {
					t.Fatalf("status = %s/%s (%s) after %s, want a completed success: the wall clock %s ran during the %s wait for admission",
						st.Exit, st.Failure, st.Reason, took, wall, wait)
				}
			} else if st.Failure != FailTimeout || took < wait+wall {
				t.Fatalf("status = %s/%s (%s) after %s, want a timeout no sooner than %s (admission + wall clock)",
					st.Exit, st.Failure, st.Reason, took, wait+wall)
			}
			if got, ws := seen.list(), "workspace: "+waitingNote; len(got) < 2 || got[0] != ws || got[1] != "running" {
				t.Errorf("progress stages = %q, want %q, then running", got, ws)
			}
			if left := leftovers(t, st.EpisodeID); len(left) != 0 {
				t.Errorf("containers/volumes left after the episode: %+v", left)
			}
		})
	}
}

// A cancel during the wait for admission cancels the episode; it is not a
// timeout nor an infrastructure failure.
func TestCancelDuringAdmission(t *testing.T) {
	d, _ := fakeModel(t, script(), nil)
	d.Runtime = admission{Runtime: d.Runtime, wait: time.Minute}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	spec := testTask(t, time.Second)
	st, err := Run(ctx, d, Options{Task: spec, TaskID: spec.ID, Model: "fake", Dir: filepath.Join(t.TempDir(), "ep")})
	if err != nil {
		t.Fatal(err)
	}
	if st.Exit != ExitCancelled || st.Failure != FailCancelled {
		t.Fatalf("status = %s/%s (%s), want cancelled", st.Exit, st.Failure, st.Reason)
	}
	if left := leftovers(t, st.EpisodeID); len(left) != 0 {
		t.Errorf("leftovers after cancel: %+v", left)
	}
}
