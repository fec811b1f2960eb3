package server

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/taskspec"
)

// Upload limits for POST /v1/tasks. The bytes received and the bytes
// written are counted apart: a tar's headers can declare more than it
// carries (sparse entries, which are refused), and a task's inputs must
// fit in an episode's workspace export (taskspec.MaxInputBytes).
const (
	MaxTaskFiles         = 100_000
	MaxTaskUnpackedBytes = taskspec.MaxInputBytes + taskspec.MaxSpecBytes
	// MaxTaskUploadBytes allows the unpacked bytes plus tar framing
	// (a 512-byte header and up to 511 bytes of padding per entry).
	MaxTaskUploadBytes = MaxTaskUnpackedBytes + MaxTaskFiles*1024 + 1024
)

// untarLimits bound one unpack.
type untarLimits struct {
	Entries int    // tar entries, directories included
	Bytes   int64  // file bytes written, all files together
	Spec    string // the spec's entry name, which must be present; "": none needed
}

var uploadLimits = untarLimits{Entries: MaxTaskFiles, Bytes: MaxTaskUnpackedBytes, Spec: taskspec.FileName}

// untar extracts regular files and directories only, below dst, refusing
// absolute names, "..", links, devices and sparse entries, and stopping at
// lim. Every refusal names the entry or the limit; a limit passed (the
// upload's byte cap, the entry count, the unpacked size) is
// api.ErrTooLarge, anything else api.ErrInvalid.
func untar(r io.Reader, dst string, lim untarLimits) error {
	tr := tar.NewReader(r)
	n := 0
	var written int64
	sawSpec := false
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("read task upload: %v: %w", err, bodyClass(err))
		}
		n++
		if n > lim.Entries {
			return fmt.Errorf("task upload has more than %d entries (the entry limit): %w", lim.Entries, api.ErrTooLarge)
		}
		name, err := entryName(h)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, filepath.FromSlash(name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o750); err != nil {
				return unpackErr(name, err)
			}
		case tar.TypeReg:
			if h.Size > lim.Bytes-written {
				return fmt.Errorf("task upload entry %q: %d bytes would pass the unpacked-size limit of %d bytes: %w", name, h.Size, lim.Bytes, api.ErrTooLarge)
			}
			c, err := writeEntry(tr, dst, name, lim.Bytes-written)
			written += c
			if err != nil {
				return err
			}
			sawSpec = sawSpec || name == lim.Spec
		default:
			return fmt.Errorf("task upload entry %q is not a regular file or directory: %w", h.Name, api.ErrInvalid)
		}
	}
	if !sawSpec && lim.Spec != "" {
		return fmt.Errorf("task upload has no %s: %w", lim.Spec, api.ErrInvalid)
	}
	return nil
}

// entryName returns h's clean relative name or an error for an unsafe or
// sparse entry.
func entryName(h *tar.Header) (string, error) {
	name := strings.TrimSuffix(h.Name, "/")
	if name == "" || path.IsAbs(name) || path.Clean(name) != name || name == ".." || strings.HasPrefix(name, "../") || strings.ContainsRune(name, 0) {
		return "", fmt.Errorf("task upload entry %q is not a clean relative path: %w", h.Name, api.ErrInvalid)
	}
	for k := range h.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return "", fmt.Errorf("task upload entry %q is a sparse file; sparse entries are refused: %w", h.Name, api.ErrInvalid)
		}
	}
	return name, nil
}

// writeEntry copies the current entry to dst/name, writing at most max
// bytes, and returns how many it wrote.
func writeEntry(tr *tar.Reader, dst, name string, max int64) (int64, error) {
	target := filepath.Join(dst, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(target), 0o750); err != nil {
		return 0, unpackErr(name, err)
	}
	f, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o640)
	if err != nil {
		return 0, unpackErr(name, err)
	}
	c, err := io.Copy(f, io.LimitReader(tr, max+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return c, unpackErr(name, err)
	}
	if c > max {
		return c, fmt.Errorf("task upload entry %q passes the unpacked-size limit: %w", name, api.ErrTooLarge)
	}
	return c, nil
}

// unpackErr classes a failure to unpack an entry. A name that collides
// with an earlier entry (a file where a directory is needed, a duplicate)
// and a broken or oversized stream are the client's errors; any other
// filesystem failure (a full disk) is the daemon's.
func unpackErr(name string, err error) error {
	var pe *fs.PathError
	collision := errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.EEXIST) || errors.Is(err, syscall.EISDIR)
	if collision {
		return fmt.Errorf("unpack %s: %v (it collides with an earlier entry): %w", name, err, api.ErrInvalid)
	}
	if errors.As(err, &pe) {
		return fmt.Errorf("unpack %s: %w", name, err)
	}
	return fmt.Errorf("unpack %s: %v: %w", name, err, bodyClass(err))
}
