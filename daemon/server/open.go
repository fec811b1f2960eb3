package server

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/mass-dev/mass/daemon/api"
)

// openNoFollow opens root/<comps...> one component at a time with
// O_NOFOLLOW relative to its parent, and only if the result is a regular
// file: a link planted anywhere below root is never followed. what names
// the thing in errors ("episode e-1").
func openNoFollow(root, what string, comps ...string) (*os.File, error) {
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, api.ErrNotFound)
	}
	for i, c := range comps {
		if c == "" || c == "." || c == ".." {
			unix.Close(fd)
			return nil, fmt.Errorf("%s: %q is not a file name: %w", what, path.Join(comps...), api.ErrInvalid)
		}
		flags := unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_CLOEXEC
		if i < len(comps)-1 {
			flags |= unix.O_DIRECTORY
		} else {
			flags |= unix.O_NONBLOCK // a FIFO must not block the server
		}
		next, err := unix.Openat(fd, c, flags, 0)
		unix.Close(fd)
		if err != nil {
			if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
				return nil, fmt.Errorf("%s: %s is not a plain file or directory: %w", what, path.Join(comps[:i+1]...), api.ErrNotFound)
			}
			return nil, fmt.Errorf("%s: %s: %w", what, path.Join(comps[:i+1]...), api.ErrNotFound)
		}
		fd = next
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, fmt.Errorf("%s: %s is not a regular file: %w", what, path.Join(comps[1:]...), api.ErrNotFound)
	}
	return os.NewFile(uintptr(fd), filepath.Join(root, filepath.Join(comps...))), nil
}
