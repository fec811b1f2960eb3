package docker

import (
	"context"
	"fmt"
	"io"

	"github.com/docker/docker/api/types/container"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/boxhost"
)

// Grade runs a task's grader (boxhost.Grade): a workspace of its own, then
// a container of the grader's policy that mounts it read-only.
func (r *Runtime) Grade(ctx context.Context, g sandbox.GradeSpec) (sandbox.ExecResult, error) {
	return boxhost.Grade(ctx, g, r.cfg.Policy, sandbox.ValidID, boxhost.GradeOps{
		CreateWorkspace: r.CreateWorkspace, RemoveWorkspace: r.RemoveWorkspace,
		CopyIn:  r.copyIn,
		Prepare: r.prepare,
		Create: func(ctx context.Context, spec sandbox.Spec) (sandbox.Sandbox, error) {
			return r.create(ctx, spec, true)
		},
	})
}

// copyIn copies the tar that write produces into the workspace through
// its keeper (the engine's archive call).
func (r *Runtime) copyIn(ctx context.Context, episode, what string, write func(io.Writer) error) error {
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(write(pw)) }()
	err := r.cli.CopyToContainer(ctx, keeperName(episode), sandbox.WorkspaceMount, pr, container.CopyToContainerOptions{})
	pr.CloseWithError(err)
	if err != nil {
		return wrapErr("copy "+what+" into "+episode, err)
	}
	return nil
}

// prepare runs the helper's prepare as root in the keeper: ownership to
// owner, protected paths read-only.
func (r *Runtime) prepare(ctx context.Context, episode, owner string, protected []string) error {
	res, err := r.execRaw(ctx, keeperName(episode), execOpts{argv: boxhost.PrepareArgv(owner, protected), user: "0", maxBytes: 64 << 10})
	if err != nil {
		return fmt.Errorf("prepare workspace %s: %w", episode, err)
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("prepare workspace %s: helper exit %d: %q: %w", episode, res.ExitCode, res.Stderr, sandbox.ErrInvalid)
	}
	return nil
}
