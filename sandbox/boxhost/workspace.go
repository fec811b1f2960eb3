package boxhost

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

	"github.com/mass-dev/mass/internal/pathroot"
	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/helper"
)

// CheckWorkspace refuses a workspace whose episode is no valid id (validID:
// the backend's rule) or whose protected paths or input destinations
// leave it.
func CheckWorkspace(ws sandbox.WorkspaceSpec, inputs []sandbox.Input, validID func(string) bool) error {
	if !validID(ws.Episode) {
		return fmt.Errorf("create workspace: episode id %q: %w", ws.Episode, sandbox.ErrInvalid)
	}
	for _, p := range ws.Protected {
		if _, err := helper.CleanRel(p); err != nil {
			return fmt.Errorf("create workspace %s: protected: %v: %w", ws.Episode, err, sandbox.ErrInvalid)
		}
	}
	for _, in := range inputs {
		if _, err := helper.CleanRel(in.Dest); err != nil {
			return fmt.Errorf("create workspace %s: input %s: %v: %w", ws.Episode, in.HostPath, err, sandbox.ErrInvalid)
		}
	}
	return nil
}

// WorkspacePolicy is the backend's default policy with the workspace's
// own disk cap.
func WorkspacePolicy(def sandbox.Policy, ws sandbox.WorkspaceSpec) sandbox.Policy {
	if ws.DiskBytes > 0 {
		def.DiskBytes = ws.DiskBytes
	}
	return def
}

// PrepareArgv is the helper's prepare command, run as root in the keeper:
// the workspace's files go to owner, the protected paths become read-only.
func PrepareArgv(owner string, protected []string) []string {
	argv := []string{sandbox.HelperMount, "prepare", "-owner", owner}
	for _, p := range protected {
		argv = append(argv, "-protect", p)
	}
	return argv
}

// WriteInputsTar streams host inputs as the tar a workspace is filled
// from. The host side is trusted, yet symlinks and special files are
// refused rather than followed; capBytes (0: none) caps their content.
func WriteInputsTar(w io.Writer, inputs []sandbox.Input, capBytes int64) error {
	tw := tar.NewWriter(w)
	var total int64
	dirs := map[string]bool{}
	addDirs := func(rel string) error {
		for d := path.Dir(rel); d != "." && !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755}); err != nil {
				return err
			}
		}
		return nil
	}
	for _, in := range inputs {
		dest, _ := helper.CleanRel(in.Dest)
		err := filepath.WalkDir(in.HostPath, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(in.HostPath, p)
			name := path.Join(dest, filepath.ToSlash(rel))
			fi, err := d.Info()
			if err != nil {
				return err
			}
			switch {
			case fi.IsDir():
				if dirs[name] {
					return nil
				}
				if err := addDirs(name); err != nil {
					return err
				}
				dirs[name] = true
				return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: 0o755, ModTime: fi.ModTime()})
			case fi.Mode().IsRegular():
				total += fi.Size()
				if capBytes > 0 && total > capBytes {
					return fmt.Errorf("inputs exceed the workspace cap of %d bytes: %w", capBytes, sandbox.ErrTooLarge)
				}
				if err := addDirs(name); err != nil {
					return err
				}
				return copyFileTar(tw, p, name, fi)
			}
			return fmt.Errorf("input %s is not a regular file or directory: %w", p, sandbox.ErrInvalid)
		})
		if err != nil {
			return fmt.Errorf("input %s: %w", in.HostPath, err)
		}
	}
	return tw.Close()
}

func copyFileTar(tw *tar.Writer, p, name string, fi fs.FileInfo) error {
	f, err := os.OpenFile(p, os.O_RDONLY|nofollow, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	mode := int64(0o644)
	if fi.Mode()&0o111 != 0 {
		mode = 0o755
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Size: fi.Size(), Mode: mode, ModTime: fi.ModTime()}); err != nil {
		return err
	}
	_, err = io.CopyN(tw, f, fi.Size())
	return err
}

// FilterExport copies the regular files and directories of an export tar
// to w, leaving out entries under replace and everything else (links,
// special files): the grader's workspace.
func FilterExport(w io.Writer, src io.Reader, replace []string) error {
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
