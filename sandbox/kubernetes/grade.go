package kubernetes

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/docker"
)

// Grade runs a task's grader as the Docker backend does: a workspace of its
// own filled from the export (Replace and links dropped) and the shipped
// inputs, a pod of the grader's policy that mounts it read-only and runs
// `sh -c Command` in sandbox.GraderEnv; everything is removed afterwards.
func (r *Runtime) Grade(ctx context.Context, g sandbox.GradeSpec) (res sandbox.ExecResult, err error) {
	if !validID(g.Workspace) {
		return res, fmt.Errorf("grade: workspace id %q: %w", g.Workspace, sandbox.ErrInvalid)
	}
	if strings.TrimSpace(g.Command) == "" || strings.ContainsRune(g.Command, 0) {
		return res, fmt.Errorf("grade %s: empty or malformed command: %w", g.Workspace, sandbox.ErrInvalid)
	}
	pol := g.Policy
	if pol.Runtime == "" {
		pol = r.cfg.Policy
	}
	if pol.NetworkMode != "none" || pol.Egress != nil {
		return res, fmt.Errorf("grade %s: network mode %q: a grader runs without network: %w", g.Workspace, pol.NetworkMode, sandbox.ErrDenied)
	}
	if err := r.CreateWorkspace(ctx, sandbox.WorkspaceSpec{Episode: g.Workspace}, nil); err != nil {
		return res, fmt.Errorf("grade: %w", err)
	}
	defer func() {
		if rerr := r.RemoveWorkspace(context.WithoutCancel(ctx), g.Workspace); rerr != nil && err == nil {
			err = fmt.Errorf("grade: %w", rerr)
		}
	}()
	if g.Export != nil {
		if err := r.untar(ctx, g.Workspace, func(w io.Writer) error { return docker.FilterExport(w, g.Export, g.Replace) }); err != nil {
			return res, fmt.Errorf("grade: %w", err)
		}
	}
	if len(g.Inputs) > 0 {
		if err := r.untar(ctx, g.Workspace, func(w io.Writer) error { return docker.WriteInputsTar(w, g.Inputs, 0) }); err != nil {
			return res, fmt.Errorf("grade: %w", err)
		}
	}
	if err := r.keeperRun(ctx, g.Workspace, nil, sandbox.HelperMount, "prepare", "-owner", pol.User); err != nil {
		return res, fmt.Errorf("grade: %w", err)
	}
	b, err := r.create(ctx, sandbox.Spec{Episode: g.Workspace, Agent: sandbox.GraderAgent, Image: g.Image, Policy: pol,
		Env: sandbox.GraderEnv()}, true)
	if err != nil {
		return res, fmt.Errorf("grade: %w", err)
	}
	defer func() { _ = b.Remove(context.WithoutCancel(ctx)) }()
	return b.Exec(ctx, sandbox.ExecRequest{Argv: []string{"sh", "-c", g.Command}, Dir: sandbox.WorkspaceMount,
		Timeout: g.Timeout, MaxBytes: g.MaxBytes})
}
