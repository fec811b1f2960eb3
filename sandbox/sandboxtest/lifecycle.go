package sandboxtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mass-dev/mass/sandbox"
)

func testLifecycle(t *testing.T, h Harness) {
	t.Parallel()
	ctx := context.Background()
	ep := h.NewWorkspace(t, sandbox.WorkspaceSpec{}, nil)
	a := h.NewSandbox(t, ep, "orchestrator")
	h.NewSandbox(t, ep, "worker-1")
	infos, err := h.Runtime.List(ctx, ep)
	if err != nil {
		t.Fatal(err)
	}
	agents := map[string]bool{}
	volumes := 0
	for _, in := range infos {
		if in.Episode != ep {
			t.Errorf("List(%s) returned %+v", ep, in)
		}
		if in.Kind == "volume" {
			volumes++
		} else {
			agents[in.Agent] = true
		}
	}
	if !agents["orchestrator"] || !agents["worker-1"] || volumes != 1 {
		t.Errorf("List = %+v; want both agents and one volume", infos)
	}
	if _, err := a.Files().Write(ctx, "keep.txt", []byte("kept")); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := a.Exec(ctx, sandbox.ExecRequest{Argv: []string{"sleep", "600"}})
		done <- err
	}()
	Sh(t, a, "true") // the sleep is running by now or soon
	if err := h.Runtime.KillEpisode(ctx, ep); err != nil {
		t.Fatalf("KillEpisode: %v", err)
	}
	<-done // the running exec returns once its container is gone
	infos, err = h.Runtime.List(ctx, ep)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range infos {
		if in.Kind == "container" && !strings.HasPrefix(in.Agent, "_") {
			t.Errorf("after KillEpisode: %+v still there", in)
		}
	}
	m, err := h.Runtime.ExportWorkspace(ctx, ep, &bytes.Buffer{}, 0)
	if err != nil || len(m) != 1 || m[0].Path != "keep.txt" {
		t.Errorf("export after KillEpisode = %+v, %v; want keep.txt", m, err)
	}
	other := h.NewWorkspace(t, sandbox.WorkspaceSpec{}, nil)
	n, err := h.Runtime.ReapOrphans(ctx, func(e string) bool { return e != ep })
	if err != nil || n == 0 {
		t.Errorf("ReapOrphans = %d, %v; want the dead episode's objects", n, err)
	}
	if infos, err := h.Runtime.List(ctx, ep); err != nil || len(infos) != 0 {
		t.Errorf("after ReapOrphans: %+v, %v; want nothing", infos, err)
	}
	if infos, err := h.Runtime.List(ctx, other); err != nil || len(infos) == 0 {
		t.Errorf("ReapOrphans removed the live episode %s: %+v, %v", other, infos, err)
	}
}

func testReport(t *testing.T, h Harness) {
	t.Parallel()
	rep, err := h.Runtime.Report(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Engine == "" || rep.KernelVersion == "" || rep.Policy.Runtime == "" || rep.DiskCapEnforced == "" {
		t.Errorf("report lacks engine, kernel, policy or disk cap: %+v", rep)
	}
}

func testInvalid(t *testing.T, h Harness) {
	t.Parallel()
	ctx := context.Background()
	bad := []sandbox.Spec{
		{Episode: "../x", Agent: "a", Policy: h.policy()},
		{Episode: "ok", Agent: "a b", Policy: h.policy()},
		{Episode: "ok", Agent: "a"}, // zero policy
	}
	for _, s := range bad {
		if _, err := h.Runtime.Create(ctx, s); !errors.Is(err, sandbox.ErrInvalid) {
			t.Errorf("Create(%+v): %v, want ErrInvalid", s, err)
		}
	}
	if _, err := h.Runtime.Create(ctx, sandbox.Spec{Episode: "no-such-episode", Agent: "a", Policy: h.policy()}); !errors.Is(err, sandbox.ErrNotFound) {
		t.Errorf("Create without a workspace: %v, want ErrNotFound", err)
	}
	ws := []sandbox.WorkspaceSpec{
		{Episode: "x/y"},
		{Episode: Episode(t), Protected: []string{"../etc"}},
		{Episode: Episode(t), Protected: []string{"/etc"}},
	}
	for _, w := range ws {
		if err := h.Runtime.CreateWorkspace(ctx, w, nil); !errors.Is(err, sandbox.ErrInvalid) {
			t.Errorf("CreateWorkspace(%+v): %v, want ErrInvalid", w, err)
		}
	}
	live := h.NewWorkspace(t, sandbox.WorkspaceSpec{}, nil)
	if err := h.Runtime.CreateWorkspace(ctx, sandbox.WorkspaceSpec{Episode: live}, nil); !errors.Is(err, sandbox.ErrInvalid) {
		t.Errorf("CreateWorkspace twice: %v, want ErrInvalid", err)
	}
	if infos, err := h.Runtime.List(ctx, live); err != nil || len(infos) == 0 {
		t.Errorf("a second CreateWorkspace removed the first: %+v, %v", infos, err)
	}
	p := h.policy()
	p.Seccomp = "unconfined"
	if _, err := h.Runtime.Create(ctx, sandbox.Spec{Episode: "ok", Agent: "a", Policy: p}); !errors.Is(err, sandbox.ErrInvalid) {
		t.Errorf("unconfined seccomp: %v, want ErrInvalid", err)
	}
}

// testConcurrent drives one sandbox from several goroutines at once.
func testConcurrent(t *testing.T, h Harness) {
	t.Parallel()
	ep := h.NewWorkspace(t, sandbox.WorkspaceSpec{}, nil)
	sb := h.NewSandbox(t, ep, "busy")
	ctx := context.Background()
	errs := make(chan error, 16)
	for i := 0; i < 8; i++ {
		go func() {
			name := fmt.Sprintf("c/%d.txt", i)
			body := strings.Repeat(fmt.Sprint(i), 100)
			if _, err := sb.Files().Write(ctx, name, []byte(body)); err != nil {
				errs <- err
				return
			}
			r, err := sb.Files().Read(ctx, name, 0, 0)
			if err == nil && r.Content != body {
				err = fmt.Errorf("read %s back: %q", name, r.Content)
			}
			if err == nil {
				var res sandbox.ExecResult
				res, err = sb.Exec(ctx, sandbox.ExecRequest{Argv: []string{"cat", name}})
				if err == nil && string(res.Stdout) != body {
					err = fmt.Errorf("cat %s: %q", name, res.Stdout)
				}
			}
			errs <- err
		}()
	}
	for i := 0; i < 8; i++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
