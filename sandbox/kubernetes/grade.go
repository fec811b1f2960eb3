package kubernetes

import (
	"context"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/boxhost"
)

// Grade runs a task's grader as the Docker backend does (boxhost.Grade): a
// workspace of its own, then a pod of the grader's policy that mounts it
// read-only.
func (r *Runtime) Grade(ctx context.Context, g sandbox.GradeSpec) (sandbox.ExecResult, error) {
	return boxhost.Grade(ctx, g, r.cfg.Policy, validID, boxhost.GradeOps{
		// A grader's workspace reserves no capacity: it runs inside an
		// episode that holds its own, and waiting here could deadlock.
		CreateWorkspace: r.createWorkspace, RemoveWorkspace: r.removeWorkspace,
		CopyIn: r.untar,
		Prepare: func(ctx context.Context, episode, owner string, protected []string) error {
			return r.keeperRun(ctx, episode, nil, boxhost.PrepareArgv(owner, protected)...)
		},
		Create: func(ctx context.Context, spec sandbox.Spec) (sandbox.Sandbox, error) {
			return r.create(ctx, spec, true)
		},
	})
}
