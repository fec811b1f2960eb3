package boxhost

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/mass-dev/mass/sandbox"
)

// GradeOps are the backend's parts of a grading run.
type GradeOps struct {
	// CreateWorkspace and RemoveWorkspace make and remove the grader's
	// workspace (sandbox.Runtime's, or a variant for graders).
	CreateWorkspace func(ctx context.Context, ws sandbox.WorkspaceSpec, inputs []sandbox.Input) error
	RemoveWorkspace func(ctx context.Context, episode string) error
	// CopyIn streams the tar that write produces into the workspace of
	// episode (through its keeper); what names it in errors.
	CopyIn func(ctx context.Context, episode, what string, write func(io.Writer) error) error
	// Prepare runs PrepareArgv(owner, protected) in the workspace's keeper.
	Prepare func(ctx context.Context, episode, owner string, protected []string) error
	// Create starts the grader's box with the workspace mounted read-only.
	Create func(ctx context.Context, spec sandbox.Spec) (sandbox.Sandbox, error)
}

// Grade runs a task's grader: a workspace of its own filled from the
// export (entries under Replace and links dropped) and the shipped inputs,
// then a box of the grader's policy (def when g has none) that mounts it
// read-only and runs `sh -c Command` in sandbox.GraderEnv. Everything is
// removed afterwards.
func Grade(ctx context.Context, g sandbox.GradeSpec, def sandbox.Policy, validID func(string) bool, ops GradeOps) (res sandbox.ExecResult, err error) {
	if !validID(g.Workspace) {
		return res, fmt.Errorf("grade: workspace id %q: %w", g.Workspace, sandbox.ErrInvalid)
	}
	if strings.TrimSpace(g.Command) == "" || strings.ContainsRune(g.Command, 0) {
		return res, fmt.Errorf("grade %s: empty or malformed command: %w", g.Workspace, sandbox.ErrInvalid)
	}
	pol := g.Policy
	if pol.Runtime == "" {
		pol = def
	}
	if pol.NetworkMode != "none" || pol.Egress != nil {
		return res, fmt.Errorf("grade %s: network mode %q: a grader runs without network: %w", g.Workspace, pol.NetworkMode, sandbox.ErrDenied)
	}
	if err := ops.CreateWorkspace(ctx, sandbox.WorkspaceSpec{Episode: g.Workspace}, nil); err != nil {
		return res, fmt.Errorf("grade: %w", err)
	}
	defer func() {
		if rerr := ops.RemoveWorkspace(context.WithoutCancel(ctx), g.Workspace); rerr != nil && err == nil {
			err = fmt.Errorf("grade: %w", rerr)
		}
	}()
	if g.Export != nil {
		if err := ops.CopyIn(ctx, g.Workspace, "the exported workspace", func(w io.Writer) error { return FilterExport(w, g.Export, g.Replace) }); err != nil {
			return res, fmt.Errorf("grade: %w", err)
		}
	}
	if len(g.Inputs) > 0 {
		if err := ops.CopyIn(ctx, g.Workspace, "the shipped inputs", func(w io.Writer) error { return WriteInputsTar(w, g.Inputs, 0) }); err != nil {
			return res, fmt.Errorf("grade: %w", err)
		}
	}
	if err := ops.Prepare(ctx, g.Workspace, pol.User, nil); err != nil {
		return res, fmt.Errorf("grade: %w", err)
	}
	b, err := ops.Create(ctx, sandbox.Spec{Episode: g.Workspace, Agent: sandbox.GraderAgent, Image: g.Image, Policy: pol,
		Env: sandbox.GraderEnv()})
	if err != nil {
		return res, fmt.Errorf("grade: %w", err)
	}
	defer func() { _ = b.Remove(context.WithoutCancel(ctx)) }()
	return b.Exec(ctx, sandbox.ExecRequest{Argv: []string{"sh", "-c", g.Command}, Dir: sandbox.WorkspaceMount,
		Timeout: g.Timeout, MaxBytes: g.MaxBytes})
}
