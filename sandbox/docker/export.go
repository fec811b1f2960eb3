package docker

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/helper"
)

// DefaultExportBytes caps an export whose caller passed no cap: a sparse
// file can claim any size, so an export is never unbounded.
const DefaultExportBytes = 16 << 30

// ExportWorkspace streams /workspace out of the keeper through the engine
// (CopyFromContainer) and rewrites it into w with workspace-relative names.
// Regular files, directories and symlinks (as links, never followed) are
// kept, owned 0:0 with setuid/setgid/sticky stripped; other entries appear
// only in the manifest as type "other". A sparse file larger than the
// workspace is left out, and a directory below which the engine dropped
// paths past PATH_MAX is marked, each with a note in FileInfo.Omitted. The
// export fails with ErrTooLarge once file contents pass maxBytes
// (DefaultExportBytes when 0).
func (r *Runtime) ExportWorkspace(ctx context.Context, episode string, w io.Writer, maxBytes int64) ([]sandbox.FileInfo, error) {
	if !sandbox.ValidID(episode) {
		return nil, fmt.Errorf("export workspace: episode id %q: %w", episode, sandbox.ErrInvalid)
	}
	if maxBytes <= 0 {
		maxBytes = DefaultExportBytes
	}
	x := &exporter{tw: tar.NewWriter(w), max: maxBytes, sparseOver: r.sparseOver(ctx, episode)}
	if err := r.exportTree(ctx, episode, x, ""); err != nil {
		return x.out, fmt.Errorf("export workspace %s: %w", episode, err)
	}
	r.checkDeepDirs(ctx, episode, x)
	// The engine's tar names each further name of a hard-linked file only
	// as a link; it becomes a copy of its own, fetched by name (F4).
	for _, l := range x.links {
		if err := r.exportLink(ctx, episode, x, l); err != nil {
			return x.out, fmt.Errorf("export workspace %s: hard link %s: %w", episode, l.name, err)
		}
	}
	if err := x.tw.Close(); err != nil {
		return x.out, fmt.Errorf("export workspace %s: %w", episode, err)
	}
	return x.out, nil
}

// exportLink writes l as a regular file with the content of its target,
// read again from the keeper.
func (r *Runtime) exportLink(ctx context.Context, episode string, x *exporter, l hardLink) error {
	rc, _, err := r.cli.CopyFromContainer(ctx, keeperName(episode), sandbox.WorkspaceMount+"/"+l.target)
	if err != nil {
		return wrapErr("read link target "+l.target, err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	h, err := tr.Next()
	if err != nil {
		return fmt.Errorf("read link target %s: %w", l.target, err)
	}
	if h.Typeflag != tar.TypeReg {
		return fmt.Errorf("link target %s is no longer a regular file: %w", l.target, sandbox.ErrInvalid)
	}
	h.Name = l.name
	return x.file(h, tr)
}

// rewriteExport copies a tar from the engine into w, capping content and
// building the manifest; hard links stay manifest-only "other" entries.
func rewriteExport(src io.Reader, w io.Writer, maxBytes int64) ([]sandbox.FileInfo, error) {
	x := &exporter{tw: tar.NewWriter(w), max: maxBytes}
	if err := x.copyTar(src); err != nil {
		return x.out, err
	}
	for _, l := range x.links {
		x.out = append(x.out, sandbox.FileInfo{Path: l.name, Type: "other"})
	}
	return x.out, x.tw.Close()
}

// exporter rewrites engine tar entries into the export.
type exporter struct {
	tw    *tar.Writer
	max   int64
	total int64
	out   []sandbox.FileInfo
	links []hardLink
	// sparseOver is the workspace's size: a file of a larger apparent size
	// is mostly holes and is left out with a note (0: none is).
	sparseOver int64
	// prefix is prepended to the names of the tar being read (a subtree
	// the export resumed at); "" for the whole workspace.
	prefix string
}

// hardLink is a further name of a file already exported.
type hardLink struct{ name, target string }

// copyTar rewrites every entry of the engine's tar, setting hard links
// aside.
func (x *exporter) copyTar(src io.Reader) error {
	tr := tar.NewReader(src)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read engine tar: %w", err)
		}
		name, ok := exportName(path.Join(x.prefix, h.Name))
		if !ok {
			continue // the workspace root itself
		}
		h.Name = name
		if h.Typeflag == tar.TypeLink {
			h.Linkname = path.Join(x.prefix, h.Linkname)
		}
		if err := x.entry(h, tr); err != nil {
			return err
		}
	}
}

func (x *exporter) entry(h *tar.Header, tr io.Reader) error {
	name := h.Name
	info := sandbox.FileInfo{Path: name, Mode: uint32(h.Mode) & 0o777, Stripped: uint32(h.Mode) & 0o7000}
	nh := exportHeader(name, h)
	switch h.Typeflag {
	case tar.TypeDir:
		info.Type = "dir"
		info.Omitted = deepDirNote(name)
		nh.Typeflag, nh.Name = tar.TypeDir, name+"/"
		if err := x.tw.WriteHeader(nh); err != nil {
			return err
		}
	case tar.TypeSymlink:
		info.Type = "symlink"
		nh.Typeflag, nh.Linkname = tar.TypeSymlink, h.Linkname
		if err := x.tw.WriteHeader(nh); err != nil {
			return err
		}
	case tar.TypeReg:
		return x.file(h, tr)
	case tar.TypeLink:
		if target, ok := exportName(h.Linkname); ok {
			x.links = append(x.links, hardLink{name: name, target: target})
			return nil
		}
		info.Type = "other"
	default:
		info.Type = "other"
	}
	x.out = append(x.out, info)
	return nil
}

// file writes one regular file, counting it against the cap.
func (x *exporter) file(h *tar.Header, body io.Reader) error {
	name := h.Name
	info := sandbox.FileInfo{Path: name, Type: "file", Size: h.Size, Mode: uint32(h.Mode) & 0o777, Stripped: uint32(h.Mode) & 0o7000}
	if x.sparseOver > 0 && h.Size > x.sparseOver {
		info.Omitted = fmt.Sprintf("apparent size %d bytes passes the workspace's %d: a sparse file, left out of the export", h.Size, x.sparseOver)
		x.out = append(x.out, info)
		return &leftOut{name: name}
	}
	x.total += h.Size
	if x.max > 0 && x.total > x.max {
		return fmt.Errorf("workspace content passes %d bytes at %s: %w", x.max, name, sandbox.ErrTooLarge)
	}
	nh := exportHeader(name, h)
	nh.Typeflag, nh.Size = tar.TypeReg, h.Size
	if err := x.tw.WriteHeader(nh); err != nil {
		return err
	}
	hs := sha256.New()
	n, err := io.Copy(io.MultiWriter(x.tw, hs), io.LimitReader(body, h.Size))
	if err != nil {
		return err
	}
	if n != h.Size {
		return fmt.Errorf("short read of %s: %w", name, io.ErrUnexpectedEOF)
	}
	info.SHA256 = hex.EncodeToString(hs.Sum(nil))
	x.out = append(x.out, info)
	return nil
}

// The engine archives a workspace from inside the container's root, as
// /workspace/<name>, and silently skips every entry whose absolute path
// passes PATH_MAX (4,096 bytes with its NUL): below a directory deeper than
// deepDirBytes a child (of a name up to 255 bytes) may be missing from the
// export with no error (F4).
const (
	pathMax      = 4096
	deepDirBytes = pathMax - 1 - len(sandbox.WorkspaceMount+"/") - 1 - 255
)

// deepDirNote is the manifest's note on a directory below which the
// engine's archive may have left entries out, "" for any other.
func deepDirNote(name string) string {
	if len(name) <= deepDirBytes {
		return ""
	}
	return fmt.Sprintf("directory path of %d bytes: entries below it whose paths pass PATH_MAX (%d bytes) "+
		"may be missing from the export (the engine's archive skips them without an error)", len(name), pathMax)
}

// exportHeader is the normalised header of an export entry: owner 0:0
// with no names, permission bits only. Setuid, setgid and sticky bits never
// leave the workspace, so an operator who unpacks an export as root gets no
// privileged binary an agent planted (F3); FileInfo.Stripped records them.
func exportHeader(name string, h *tar.Header) *tar.Header {
	return &tar.Header{Name: name, Mode: h.Mode & 0o777, Uid: 0, Gid: 0, ModTime: h.ModTime, Format: tar.FormatPAX}
}

// exportName turns an engine tar name ("./a/b", "a/b", "workspace/a") into
// a clean workspace-relative name; ok is false for the root entry.
func exportName(n string) (string, bool) {
	n = strings.TrimPrefix(n, "./")
	n = strings.TrimSuffix(n, "/")
	if n == "" || n == "." {
		return "", false
	}
	c, err := helper.CleanRel(n)
	if err != nil {
		return "", false
	}
	return c, true
}
