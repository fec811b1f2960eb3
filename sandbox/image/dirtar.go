package image

import (
	"archive/tar"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// skipDirs are root filesystem directories whose contents the engine
// provides at run time; the directories themselves are kept empty.
var skipDirs = map[string]bool{"dev": true, "proc": true, "sys": true, "run": true}

// writeDirTar writes the tree under root to w as a tar with numeric owners.
// Hard links are kept as links, device nodes and sockets are dropped, and
// symlinks are stored as links (never followed).
func writeDirTar(root string, w io.Writer) error {
	tw := tar.NewWriter(w)
	seen := map[[2]uint64]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		if rel == "." {
			return nil
		}
		rel = filepath.ToSlash(rel)
		top, _, nested := strings.Cut(rel, "/")
		if skipDirs[top] && nested {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		fi, err := os.Lstat(path)
		if err != nil {
			return err
		}
		mode := fi.Mode()
		if mode&(fs.ModeDevice|fs.ModeCharDevice|fs.ModeSocket|fs.ModeNamedPipe) != 0 {
			return nil
		}
		link := ""
		if mode&fs.ModeSymlink != 0 {
			if link, err = os.Readlink(path); err != nil {
				return err
			}
		}
		h, err := tar.FileInfoHeader(fi, link)
		if err != nil {
			return fmt.Errorf("tar header %s: %w", rel, err)
		}
		h.Name = rel
		if d.IsDir() {
			h.Name += "/"
		}
		h.Uname, h.Gname = "", ""
		h.Format = tar.FormatPAX
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && mode.IsRegular() && st.Nlink > 1 {
			key := [2]uint64{uint64(st.Dev), st.Ino}
			if first, ok := seen[key]; ok {
				h.Typeflag, h.Linkname, h.Size = tar.TypeLink, first, 0
			} else {
				seen[key] = rel
			}
		}
		if err := tw.WriteHeader(h); err != nil {
			return fmt.Errorf("tar header %s: %w", rel, err)
		}
		if h.Typeflag != tar.TypeReg {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		if _, err := io.CopyN(tw, f, h.Size); err != nil {
			return fmt.Errorf("tar body %s: %w", rel, err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("tar %s: %w", root, err)
	}
	return tw.Close()
}
