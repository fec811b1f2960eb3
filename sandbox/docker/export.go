package docker

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
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
// only in the manifest as type "other". The
// export fails with ErrTooLarge once file contents pass maxBytes
// (DefaultExportBytes when 0).
func (r *Runtime) ExportWorkspace(ctx context.Context, episode string, w io.Writer, maxBytes int64) ([]sandbox.FileInfo, error) {
	if !sandbox.ValidID(episode) {
		return nil, fmt.Errorf("export workspace: episode id %q: %w", episode, sandbox.ErrInvalid)
	}
	if maxBytes <= 0 {
		maxBytes = DefaultExportBytes
	}
	rc, _, err := r.cli.CopyFromContainer(ctx, keeperName(episode), sandbox.WorkspaceMount+"/.")
	if err != nil {
		return nil, wrapErr("export workspace "+episode, err)
	}
	defer rc.Close()
	m, err := rewriteExport(rc, w, maxBytes)
	if err != nil {
		return m, fmt.Errorf("export workspace %s: %w", episode, err)
	}
	return m, nil
}

// rewriteExport copies a tar from the engine into w, capping content and
// building the manifest.
func rewriteExport(src io.Reader, w io.Writer, maxBytes int64) ([]sandbox.FileInfo, error) {
	tr := tar.NewReader(src)
	tw := tar.NewWriter(w)
	var total int64
	var out []sandbox.FileInfo
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return out, fmt.Errorf("read engine tar: %w", err)
		}
		name, ok := exportName(h.Name)
		if !ok {
			continue // the workspace root itself
		}
		info := sandbox.FileInfo{Path: name, Mode: uint32(h.Mode) & 0o777, Stripped: uint32(h.Mode) & 0o7000}
		nh := exportHeader(name, h)
		switch h.Typeflag {
		case tar.TypeDir:
			info.Type = "dir"
			nh.Typeflag, nh.Name = tar.TypeDir, name+"/"
			if err := tw.WriteHeader(nh); err != nil {
				return out, err
			}
		case tar.TypeSymlink:
			info.Type = "symlink"
			nh.Typeflag, nh.Linkname = tar.TypeSymlink, h.Linkname
			if err := tw.WriteHeader(nh); err != nil {
				return out, err
			}
		case tar.TypeReg:
			info.Type, info.Size = "file", h.Size
			total += h.Size
			if maxBytes > 0 && total > maxBytes {
				return out, fmt.Errorf("workspace content passes %d bytes at %s: %w", maxBytes, name, sandbox.ErrTooLarge)
			}
			nh.Typeflag, nh.Size = tar.TypeReg, h.Size
			if err := tw.WriteHeader(nh); err != nil {
				return out, err
			}
			hs := sha256.New()
			n, err := io.Copy(io.MultiWriter(tw, hs), io.LimitReader(tr, h.Size))
			if err != nil {
				return out, err
			}
			if n != h.Size {
				return out, fmt.Errorf("short read of %s: %w", name, io.ErrUnexpectedEOF)
			}
			info.SHA256 = hex.EncodeToString(hs.Sum(nil))
		default:
			info.Type = "other"
		}
		out = append(out, info)
	}
	return out, tw.Close()
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
