package docker

import (
	"archive/tar"
	"context"
	"fmt"
	"io"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/boxhost"
)

// ExportWorkspace streams /workspace out of the keeper through the engine
// (CopyFromContainer) and rewrites it into w with workspace-relative names.
// Regular files, directories and symlinks (as links, never followed) are
// kept, owned 0:0 with setuid/setgid/sticky stripped; other entries appear
// only in the manifest as type "other". A sparse file larger than the
// workspace is left out, and a directory below which the engine dropped
// paths past PATH_MAX is marked, each with a note in FileInfo.Omitted. The
// export fails with ErrTooLarge once file contents pass maxBytes
// (boxhost.DefaultExportBytes when 0).
func (r *Runtime) ExportWorkspace(ctx context.Context, episode string, w io.Writer, maxBytes int64) ([]sandbox.FileInfo, error) {
	if !sandbox.ValidID(episode) {
		return nil, fmt.Errorf("export workspace: episode id %q: %w", episode, sandbox.ErrInvalid)
	}
	if maxBytes <= 0 {
		maxBytes = boxhost.DefaultExportBytes
	}
	x := boxhost.NewExporter(w, maxBytes, r.sparseOver(ctx, episode))
	if err := r.exportTree(ctx, episode, x, ""); err != nil {
		return x.Out, fmt.Errorf("export workspace %s: %w", episode, err)
	}
	r.checkDeepDirs(ctx, episode, x)
	// The engine's tar names each further name of a hard-linked file only
	// as a link; it becomes a copy of its own, fetched by name (F4).
	for _, l := range x.Links {
		if err := r.exportLink(ctx, episode, x, l); err != nil {
			return x.Out, fmt.Errorf("export workspace %s: hard link %s: %w", episode, l.Name, err)
		}
	}
	if err := x.Close(); err != nil {
		return x.Out, fmt.Errorf("export workspace %s: %w", episode, err)
	}
	return x.Out, nil
}

// exportLink writes l as a regular file with the content of its target,
// read again from the keeper.
func (r *Runtime) exportLink(ctx context.Context, episode string, x *boxhost.Exporter, l boxhost.HardLink) error {
	rc, _, err := r.cli.CopyFromContainer(ctx, keeperName(episode), sandbox.WorkspaceMount+"/"+l.Target)
	if err != nil {
		return wrapErr("read link target "+l.Target, err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	h, err := tr.Next()
	if err != nil {
		return fmt.Errorf("read link target %s: %w", l.Target, err)
	}
	if h.Typeflag != tar.TypeReg {
		return fmt.Errorf("link target %s is no longer a regular file: %w", l.Target, sandbox.ErrInvalid)
	}
	h.Name = l.Name
	return x.File(h, tr)
}
