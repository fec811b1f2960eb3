package docker

import (
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
	if err := x.Export(ctx, engineSource{r, episode}); err != nil {
		return x.Out, fmt.Errorf("export workspace %s: %w", episode, err)
	}
	r.checkDeepDirs(ctx, episode, x)
	return x.Out, nil
}

// engineSource reads the keeper's workspace through the engine's archive
// API (boxhost.ExportSource).
type engineSource struct {
	r       *Runtime
	episode string
}

func (s engineSource) Tar(ctx context.Context, rel string, read func(io.Reader) error) error {
	src := sandbox.WorkspaceMount + "/."
	if rel != "" {
		src = sandbox.WorkspaceMount + "/" + rel
	}
	rc, _, err := s.r.cli.CopyFromContainer(ctx, keeperName(s.episode), src)
	if err != nil {
		return wrapErr("read "+src, err)
	}
	defer rc.Close()
	return read(rc)
}

func (s engineSource) List(ctx context.Context, dir string) ([]string, error) {
	return s.r.keeperList(ctx, s.episode, dir)
}
