package helper

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// CleanRel validates a workspace-relative path: no absolute paths, no "..",
// no NUL; it returns the cleaned slash path.
func CleanRel(p string) (string, error) {
	if p == "" || len(p) > MaxPathLen || strings.IndexByte(p, 0) >= 0 {
		return "", fmt.Errorf("bad workspace path %q", p)
	}
	c := path.Clean(strings.TrimPrefix(p, "./"))
	if path.IsAbs(c) || c == "." || c == ".." || strings.HasPrefix(c, "../") {
		return "", fmt.Errorf("workspace path %q must be relative and stay inside the workspace", p)
	}
	return c, nil
}

// Prepare sets the ownership of a freshly filled workspace (run as root in
// the workspace keeper): everything belongs to uid:gid, except the protected
// paths, which become root-owned and not writable by others, and their
// ancestors, which become root-owned sticky world-writable directories so
// agents may add files beside them but cannot rename or delete them.
func Prepare(root string, uid, gid int, protected []string) error {
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
	if err != nil {
		return fmt.Errorf("chown workspace: %w", err)
	}
	if err := os.Chmod(root, 0o755); err != nil {
		return fmt.Errorf("chmod workspace: %w", err)
	}
	for _, rel := range protected {
		c, err := CleanRel(rel)
		if err != nil {
			return err
		}
		if err := protect(root, c); err != nil {
			return fmt.Errorf("protect %s: %w", c, err)
		}
	}
	return nil
}

func protect(root, rel string) error {
	full := filepath.Join(root, filepath.FromSlash(rel))
	fi, err := os.Lstat(full)
	if err != nil {
		return err
	}
	// Walk the ancestors one by one with Lstat so that none is a symlink.
	dir := root
	parts := strings.Split(rel, "/")
	for _, part := range append([]string{""}, parts[:len(parts)-1]...) {
		if part != "" {
			dir = filepath.Join(dir, part)
		}
		st, err := os.Lstat(dir)
		if err != nil {
			return err
		}
		if !st.IsDir() {
			return fmt.Errorf("ancestor %s is not a directory", dir)
		}
		if err := os.Lchown(dir, 0, 0); err != nil {
			return err
		}
		if err := os.Chmod(dir, 0o777|fs.ModeSticky); err != nil {
			return err
		}
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("protected path is a symlink")
	}
	return filepath.WalkDir(full, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := os.Lchown(p, 0, 0); err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		st, err := d.Info()
		if err != nil {
			return err
		}
		mode := st.Mode().Perm() &^ 0o022
		if d.IsDir() {
			mode |= 0o755
		} else {
			mode |= 0o444
		}
		return os.Chmod(p, mode)
	})
}

// DiskUsage returns the bytes allocated under root (st_blocks, so sparse
// files count what they use), never following links.
func DiskUsage(root string) (int64, error) {
	var total int64
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // vanished or unreadable: skip
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			total += st.Blocks * 512
		}
		return nil
	})
	return total, err
}
