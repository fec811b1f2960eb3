package boxhost

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"path"

	"github.com/mass-dev/mass/sandbox"
)

// ExportSource is how a backend reads its workspace for an export: tars
// and listings made in the box (the host never opens a workspace path).
type ExportSource interface {
	// Tar streams the workspace subtree rel ("" for all of it) as a tar
	// whose names are relative to rel's parent (to the workspace for "")
	// and hands it to read. When read fails (a file left out, the cap)
	// the reading in the box must stop; Tar returns read's error, else
	// the stream's own.
	Tar(ctx context.Context, rel string, read func(io.Reader) error) error
	// List names the entries of the workspace directory dir ("." the
	// root), hidden names and unreadable directories included.
	List(ctx context.Context, dir string) ([]string, error)
}

// Export writes the whole workspace from src: its tree, each further
// name of a hard-linked file as a copy of its own, then the tar's end.
func (x *Exporter) Export(ctx context.Context, src ExportSource) error {
	if err := x.Tree(ctx, src, ""); err != nil {
		return err
	}
	// A tar names each further name of a hard-linked file only as a link;
	// it becomes a copy of its own, fetched by name (F4).
	for _, l := range x.Links {
		var lo *LeftOut
		if err := x.link(ctx, src, l); err != nil && !errors.As(err, &lo) {
			return fmt.Errorf("hard link %s: %w", l.Name, err)
		}
	}
	return x.Close()
}

// Tree exports the workspace subtree rel ("" for all of it). When the tar
// reaches a file the export leaves out, the rest of the subtree is fetched
// sibling by sibling, so the file's body is never read (F4).
func (x *Exporter) Tree(ctx context.Context, src ExportSource, rel string) error {
	x.Prefix = ""
	if rel != "" {
		x.Prefix = path.Dir(rel)
	}
	err := src.Tar(ctx, rel, x.CopyTar)
	var lo *LeftOut
	if !errors.As(err, &lo) {
		return err
	}
	return x.after(ctx, src, rel, lo.Name)
}

// after exports what the tar of rel did not reach when it stopped at name:
// the entries not yet exported beside name and beside each of its
// ancestors below rel. A tar walks depth first, so every entry it gave
// before name is complete; its order within a directory (the engine's is
// sorted, `tar -c`'s the directory's) does not matter.
func (x *Exporter) after(ctx context.Context, src ExportSource, rel, name string) error {
	for child := name; child != rel && child != "." && child != ""; child = path.Dir(child) {
		dir := path.Dir(child)
		names, err := src.List(ctx, dir)
		if err != nil {
			return err
		}
		for _, n := range names {
			p := path.Join(dir, n)
			// A path past PATH_MAX is one the engine's archive skipped
			// (deepDirNote); it cannot be fetched by name either.
			if x.seen[p] || len(sandbox.WorkspaceMount)+1+len(p) >= PathMax {
				continue
			}
			if err := x.Tree(ctx, src, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// link writes l as a regular file with the content of its target, read
// again from the box.
func (x *Exporter) link(ctx context.Context, src ExportSource, l HardLink) error {
	return src.Tar(ctx, l.Target, func(r io.Reader) error {
		tr := tar.NewReader(r)
		h, err := tr.Next()
		if err != nil {
			return fmt.Errorf("read link target %s: %w", l.Target, err)
		}
		if h.Typeflag != tar.TypeReg {
			return fmt.Errorf("link target %s is no longer a regular file: %w", l.Target, sandbox.ErrInvalid)
		}
		h.Name = l.Name
		return x.File(h, tr)
	})
}
