// Package atomicfile writes a file so that a crash leaves either the old
// content or the new, never a torn file: a synced temporary file in the same
// directory, renamed over the target, then the directory synced.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// Write replaces path with b, mode perm. The directory must exist. On error
// the temporary file is removed and path is unchanged.
func Write(path string, b []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	// The rename is durable once the directory is; a failure here loses
	// nothing that a crash before the rename would not.
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}
