// Package workspace reads exported workspace tars on the host. It never
// touches the host filesystem for names inside the archive: links and
// special files are reported, never followed or opened, and every read is
// capped.
package workspace

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/helper"
)

// Limits bound what reading an archive may cost.
type Limits struct {
	MaxEntries   int   // entries in the archive
	MaxFileBytes int64 // one regular file's content
	MaxTotal     int64 // all regular file content together
}

// DefaultLimits suits exported episode workspaces.
var DefaultLimits = Limits{MaxEntries: 200_000, MaxFileBytes: 1 << 30, MaxTotal: 8 << 30}

// Open opens an archive file on the host without following a symlink at
// its final component and refuses anything but a regular file.
func Open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("open workspace archive %s: %w", path, err)
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("open workspace archive %s: not a regular file: %w", path, sandbox.ErrInvalid)
	}
	return f, nil
}

// Walk calls fn for every entry in order. For a regular file body yields
// its content (a file over MaxFileBytes fails the walk with ErrTooLarge);
// for anything else body is nil. Names are checked: an absolute name or one
// that climbs out with ".." fails the walk with ErrInvalid.
func Walk(r io.Reader, lim Limits, fn func(info sandbox.FileInfo, body io.Reader) error) error {
	tr := tar.NewReader(r)
	var total int64
	for n := 0; ; n++ {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read workspace archive: %v: %w", err, sandbox.ErrInvalid)
		}
		if lim.MaxEntries > 0 && n >= lim.MaxEntries {
			return fmt.Errorf("workspace archive has more than %d entries: %w", lim.MaxEntries, sandbox.ErrTooLarge)
		}
		name, err := helper.CleanRel(strings.TrimSuffix(h.Name, "/"))
		if err != nil {
			return fmt.Errorf("workspace archive entry %q: %v: %w", h.Name, err, sandbox.ErrInvalid)
		}
		info := sandbox.FileInfo{Path: name, Mode: uint32(h.Mode) & 0o7777, Type: typeOf(h.Typeflag)}
		if info.Type != "file" {
			if err := fn(info, nil); err != nil {
				return err
			}
			continue
		}
		info.Size = h.Size
		if h.Size < 0 || lim.MaxFileBytes > 0 && h.Size > lim.MaxFileBytes {
			return fmt.Errorf("workspace file %s has %d bytes, cap %d: %w", name, h.Size, lim.MaxFileBytes, sandbox.ErrTooLarge)
		}
		total += h.Size
		if lim.MaxTotal > 0 && total > lim.MaxTotal {
			return fmt.Errorf("workspace archive content passes %d bytes: %w", lim.MaxTotal, sandbox.ErrTooLarge)
		}
		if err := fn(info, io.LimitReader(tr, h.Size)); err != nil {
			return err
		}
	}
}

func typeOf(t byte) string {
	switch t {
	case tar.TypeReg:
		return "file"
	case tar.TypeDir:
		return "dir"
	case tar.TypeSymlink:
		return "symlink"
	}
	return "other"
}

// Manifest lists the archive's entries with sha256 for regular files.
func Manifest(r io.Reader, lim Limits) ([]sandbox.FileInfo, error) {
	var out []sandbox.FileInfo
	err := Walk(r, lim, func(info sandbox.FileInfo, body io.Reader) error {
		if body != nil {
			h := sha256.New()
			n, err := io.Copy(h, body)
			if err != nil {
				return fmt.Errorf("read %s: %w", info.Path, err)
			}
			if n != info.Size {
				return fmt.Errorf("read %s: %d of %d bytes: %w", info.Path, n, info.Size, sandbox.ErrInvalid)
			}
			info.SHA256 = hex.EncodeToString(h.Sum(nil))
		}
		out = append(out, info)
		return nil
	})
	return out, err
}

// ReadFile returns one regular file's content, at most max bytes. A symlink,
// directory or special file of that name is refused with ErrDenied; a
// missing one is ErrNotFound.
func ReadFile(r io.Reader, name string, max int64) ([]byte, error) {
	want, err := helper.CleanRel(name)
	if err != nil {
		return nil, fmt.Errorf("read %q from workspace archive: %v: %w", name, err, sandbox.ErrInvalid)
	}
	var out []byte
	found := false
	errDone := errors.New("done")
	err = Walk(r, Limits{}, func(info sandbox.FileInfo, body io.Reader) error {
		if info.Path != want {
			return nil
		}
		found = true
		if body == nil {
			return fmt.Errorf("%s is a %s, not a regular file: %w", want, info.Type, sandbox.ErrDenied)
		}
		if max > 0 && info.Size > max {
			return fmt.Errorf("%s has %d bytes, cap %d: %w", want, info.Size, max, sandbox.ErrTooLarge)
		}
		b, err := io.ReadAll(body)
		if err != nil {
			return err
		}
		out = b
		return errDone
	})
	if errors.Is(err, errDone) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s from workspace archive: %w", want, err)
	}
	if !found {
		return nil, fmt.Errorf("read %s from workspace archive: %w", want, sandbox.ErrNotFound)
	}
	return out, nil
}

// Verify checks that the archive holds exactly the regular files of the
// manifest with the same sha256.
func Verify(r io.Reader, manifest []sandbox.FileInfo, lim Limits) error {
	got, err := Manifest(r, lim)
	if err != nil {
		return err
	}
	want := map[string]string{}
	for _, f := range manifest {
		if f.Type == "file" && f.Omitted == "" { // an omitted file is not in the archive
			want[f.Path] = f.SHA256
		}
	}
	for _, f := range got {
		if f.Type != "file" {
			continue
		}
		sum, ok := want[f.Path]
		if !ok {
			return fmt.Errorf("archive file %s is not in the manifest: %w", f.Path, sandbox.ErrInvalid)
		}
		if sum != f.SHA256 {
			return fmt.Errorf("archive file %s has sha256 %s, manifest says %s: %w", f.Path, f.SHA256, sum, sandbox.ErrInvalid)
		}
		delete(want, f.Path)
	}
	for p := range want {
		return fmt.Errorf("manifest file %s is missing from the archive: %w", p, sandbox.ErrInvalid)
	}
	return nil
}

// MaxManifestBytes caps a workspace.manifest.json.
const MaxManifestBytes = 64 << 20

// DecodeManifest parses a workspace.manifest.json ([{"path","type","size","mode","sha256"}]).
func DecodeManifest(r io.Reader) ([]sandbox.FileInfo, error) {
	lr := &io.LimitedReader{R: r, N: MaxManifestBytes + 1}
	var out []sandbox.FileInfo
	if err := json.NewDecoder(lr).Decode(&out); err != nil {
		if lr.N <= 0 {
			return nil, fmt.Errorf("workspace manifest over %d bytes: %w", MaxManifestBytes, sandbox.ErrTooLarge)
		}
		return nil, fmt.Errorf("decode workspace manifest: %v: %w", err, sandbox.ErrInvalid)
	}
	for i, f := range out {
		if _, err := helper.CleanRel(f.Path); err != nil {
			return nil, fmt.Errorf("workspace manifest entry %d: %v: %w", i, err, sandbox.ErrInvalid)
		}
	}
	return out, nil
}
