package docker

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/docker/docker/api/types/container"

	"github.com/mass-dev/mass/internal/pathroot"
	"github.com/mass-dev/mass/sandbox"
)

// Grade runs a task's grader: a workspace of its own filled from the
// export (entries under Replace and symbolic links dropped) and the
// shipped inputs, then a container of the grader's policy that mounts it
// read-only and runs `sh -c Command` in sandbox.GraderEnv. Everything is
// removed afterwards.
func (r *Runtime) Grade(ctx context.Context, g sandbox.GradeSpec) (res sandbox.ExecResult, err error) {
	if !sandbox.ValidID(g.Workspace) {
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
	if err := r.fillGradeWorkspace(ctx, g, pol.User); err != nil {
		return res, err
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

// fillGradeWorkspace copies the filtered export and the shipped inputs into
// the grade workspace's keeper and hands the files to the grader's user.
func (r *Runtime) fillGradeWorkspace(ctx context.Context, g sandbox.GradeSpec, owner string) error {
	keeper := keeperName(g.Workspace)
	copyTar := func(what string, write func(io.Writer) error) error {
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(write(pw)) }()
		err := r.cli.CopyToContainer(ctx, keeper, sandbox.WorkspaceMount, pr, container.CopyToContainerOptions{})
		pr.CloseWithError(err)
		if err != nil {
			return wrapErr("grade "+g.Workspace+": copy "+what, err)
		}
		return nil
	}
	if g.Export != nil {
		if err := copyTar("the exported workspace", func(w io.Writer) error { return filterExport(w, g.Export, g.Replace) }); err != nil {
			return err
		}
	}
	if len(g.Inputs) > 0 {
		if err := copyTar("the shipped inputs", func(w io.Writer) error { return writeInputsTar(w, g.Inputs, 0) }); err != nil {
			return err
		}
	}
	res, err := r.execRaw(ctx, keeper, execOpts{argv: []string{HelperMount, "prepare", "-owner", owner}, user: "0", maxBytes: 64 << 10})
	if err != nil {
		return fmt.Errorf("grade %s: prepare: %w", g.Workspace, err)
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("grade %s: prepare: %s: %w", g.Workspace, res.Stderr, sandbox.ErrInvalid)
	}
	return nil
}

// filterExport copies the regular files and directories of an export tar
// to w, leaving out entries under replace and everything else (links,
// special files).
func filterExport(w io.Writer, src io.Reader, replace []string) error {
	tr := tar.NewReader(src)
	tw := tar.NewWriter(w)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return tw.Close()
		}
		if err != nil {
			return fmt.Errorf("read workspace export: %w", err)
		}
		name, ok := exportName(h.Name)
		if !ok || underAny(name, replace) || (h.Typeflag != tar.TypeReg && h.Typeflag != tar.TypeDir) {
			continue
		}
		nh := &tar.Header{Typeflag: h.Typeflag, Name: name, Mode: h.Mode & 0o777, ModTime: h.ModTime, Size: h.Size, Format: tar.FormatPAX}
		if h.Typeflag == tar.TypeDir {
			nh.Name, nh.Size = name+"/", 0
		}
		if err := tw.WriteHeader(nh); err != nil {
			return err
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := io.CopyN(tw, tr, h.Size); err != nil {
				return fmt.Errorf("copy %s: %w", name, err)
			}
		}
	}
}

// underAny reports whether clean relative name equals or lies below a root.
func underAny(name string, roots []string) bool {
	for _, r := range roots {
		r = path.Clean(strings.TrimPrefix(r, sandbox.WorkspaceMount+"/"))
		if pathroot.Under(name, r) {
			return true
		}
	}
	return false
}
