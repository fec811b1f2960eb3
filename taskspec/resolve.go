package taskspec

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// MaxInputBytes caps the bytes of all a task's files together (inputs and
// workflow). It is half an episode's workspace export cap (1 GiB, see
// agents/episode), so a task that is accepted leaves its agents room to
// write and still exports.
const MaxInputBytes = 512 << 20

// errSymlink marks a path with a symbolic link in it.
var errSymlink = errors.New("is a symbolic link")

// lstatBeneath resolves rel below dir one component at a time and returns
// the final component's FileInfo. A symbolic link anywhere on the path (a
// parent directory as much as the last name) is an error wrapping
// errSymlink that names the component, so nothing that is accepted can
// lead out of dir.
func lstatBeneath(dir, rel string) (fs.FileInfo, error) {
	rel = filepath.Clean(filepath.FromSlash(rel))
	if rel == "." || filepath.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, fmt.Errorf("%q is not below the spec directory: %w", rel, fs.ErrInvalid)
	}
	parts := strings.Split(rel, string(filepath.Separator))
	cur := dir
	var st fs.FileInfo
	for i, p := range parts {
		cur = filepath.Join(cur, p)
		var err error
		if st, err = os.Lstat(cur); err != nil {
			return nil, err
		}
		sub := filepath.ToSlash(filepath.Join(parts[:i+1]...))
		if st.Mode()&fs.ModeSymlink != 0 {
			return nil, fmt.Errorf("%q %w", sub, errSymlink)
		}
		if i < len(parts)-1 && !st.IsDir() {
			return nil, fmt.Errorf("%q is not a directory: %w", sub, fs.ErrNotExist)
		}
	}
	return st, nil
}
