package boxhost

import (
	"archive/tar"
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

// RewriteExport copies a tar of a workspace (names relative to it, as
// `tar -C /workspace -c .` or the engine's archive write them) to w:
// normalised headers, setuid/setgid/sticky stripped, content capped at
// maxBytes (0: no cap); it returns the manifest. Hard links stay
// manifest-only "other" entries.
func RewriteExport(src io.Reader, w io.Writer, maxBytes int64) ([]sandbox.FileInfo, error) {
	x := NewExporter(w, maxBytes, 0)
	if err := x.CopyTar(src); err != nil {
		return x.Out, err
	}
	for _, l := range x.Links {
		x.Out = append(x.Out, sandbox.FileInfo{Path: l.Name, Type: "other"})
	}
	return x.Out, x.Close()
}

// Exporter rewrites the entries of workspace tars into one export.
type Exporter struct {
	tw    *tar.Writer
	max   int64
	total int64
	// Out is the manifest so far; Links the hard links set aside.
	Out   []sandbox.FileInfo
	Links []HardLink
	// SparseOver is the workspace's size: a file of a larger apparent size
	// is mostly holes and is left out with a note (0: none is).
	SparseOver int64
	// Prefix is prepended to the names of the tar being read (a subtree
	// the export resumed at); "" for the whole workspace.
	Prefix string
	seen   map[string]bool // every name read so far
}

// NewExporter writes an export to w, capped at maxBytes (0: no cap),
// leaving out files of an apparent size above sparseOver (0: none).
func NewExporter(w io.Writer, maxBytes, sparseOver int64) *Exporter {
	return &Exporter{tw: tar.NewWriter(w), max: maxBytes, SparseOver: sparseOver, seen: map[string]bool{}}
}

// Close ends the export's tar.
func (x *Exporter) Close() error { return x.tw.Close() }

// HardLink is a further name of a file already exported.
type HardLink struct{ Name, Target string }

// LeftOut ends the reading of a tar at a file the export leaves out (its
// body may be a terabyte of holes); the caller may resume after it.
type LeftOut struct{ Name string }

func (l *LeftOut) Error() string { return "export left out " + l.Name }

// CopyTar rewrites every entry of a workspace tar, setting hard links
// aside; it stops with a *LeftOut at a file it leaves out.
func (x *Exporter) CopyTar(src io.Reader) error {
	tr := tar.NewReader(src)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read engine tar: %w", err)
		}
		name, ok := exportName(path.Join(x.Prefix, h.Name))
		if !ok {
			continue // the workspace root itself
		}
		h.Name = name
		x.seen[name] = true
		if h.Typeflag == tar.TypeLink {
			h.Linkname = path.Join(x.Prefix, h.Linkname)
		}
		if err := x.entry(h, tr); err != nil {
			return err
		}
	}
}

func (x *Exporter) entry(h *tar.Header, tr io.Reader) error {
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
		return x.File(h, tr)
	case tar.TypeLink:
		if target, ok := exportName(h.Linkname); ok {
			x.Links = append(x.Links, HardLink{Name: name, Target: target})
			return nil
		}
		info.Type = "other"
	default:
		info.Type = "other"
	}
	x.Out = append(x.Out, info)
	return nil
}

// File writes one regular file, counting it against the cap.
func (x *Exporter) File(h *tar.Header, body io.Reader) error {
	name := h.Name
	info := sandbox.FileInfo{Path: name, Type: "file", Size: h.Size, Mode: uint32(h.Mode) & 0o777, Stripped: uint32(h.Mode) & 0o7000}
	if x.SparseOver > 0 && h.Size > x.SparseOver {
		info.Omitted = fmt.Sprintf("apparent size %d bytes passes the workspace's %d: a sparse file, left out of the export", h.Size, x.SparseOver)
		x.Out = append(x.Out, info)
		return &LeftOut{Name: name}
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
	x.Out = append(x.Out, info)
	return nil
}

// The engine archives a workspace from inside the container's root, as
// /workspace/<name>, and silently skips every entry whose absolute path
// passes PATH_MAX (4,096 bytes with its NUL): below a directory deeper than
// deepDirBytes a child (of a name up to 255 bytes) may be missing from the
// export with no error (F4).
const (
	PathMax      = 4096
	deepDirBytes = PathMax - 1 - len(sandbox.WorkspaceMount+"/") - 1 - 255
)

// deepDirNote is the manifest's note on a directory below which the
// engine's archive may have left entries out, "" for any other.
func deepDirNote(name string) string {
	if len(name) <= deepDirBytes {
		return ""
	}
	return fmt.Sprintf("directory path of %d bytes: entries below it whose paths pass PATH_MAX (%d bytes) "+
		"may be missing from the export (the engine's archive skips them without an error)", len(name), PathMax)
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
