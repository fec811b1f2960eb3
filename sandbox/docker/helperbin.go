package docker

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// HelperMode is the mode of the helper copy mounted into every container:
// executable by anyone, readable by its owner only. The kernel marks a
// process that execs a binary its user cannot read non-dumpable from the
// exec on, so an agent never gets a window to open a starting helper's
// /proc/PID/mem or fds (it would otherwise race the helper's own
// PR_SET_DUMPABLE call and could answer the host in its place).
const HelperMode = 0o711

// installHelper copies the helper binary src into a fresh private
// directory as a root-owned (when the daemon is root) file of mode
// HelperMode, or mode 0755 when readable (a weakening). The directory is
// removed by Close; mounted copies stay alive in their containers.
func installHelper(src string, readable bool) (dir, bin string, err error) {
	in, err := os.Open(src)
	if err != nil {
		return "", "", fmt.Errorf("open helper binary: %w", err)
	}
	defer in.Close()
	dir, err = os.MkdirTemp("", "mass-helper-")
	if err != nil {
		return "", "", fmt.Errorf("make helper dir: %w", err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		os.RemoveAll(dir)
		return "", "", fmt.Errorf("chmod helper dir: %w", err)
	}
	bin = filepath.Join(dir, "mass-sandbox-helper")
	mode := os.FileMode(HelperMode)
	if readable {
		mode = 0o755
	}
	if err := copyHelper(in, bin, mode); err != nil {
		os.RemoveAll(dir)
		return "", "", err
	}
	return dir, bin, nil
}

func copyHelper(in io.Reader, bin string, mode os.FileMode) error {
	out, err := os.OpenFile(bin, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o700)
	if err != nil {
		return fmt.Errorf("create helper copy: %w", err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copy helper binary: %w", err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("close helper copy: %w", err)
	}
	if os.Geteuid() == 0 {
		if err := os.Chown(bin, 0, 0); err != nil {
			return fmt.Errorf("chown helper copy: %w", err)
		}
	}
	if err := os.Chmod(bin, mode); err != nil {
		return fmt.Errorf("chmod helper copy: %w", err)
	}
	return nil
}

// helperOwner is the uid owning the installed helper copy.
func helperOwner(bin string) (int, error) {
	st, err := os.Stat(bin)
	if err != nil {
		return 0, fmt.Errorf("stat helper copy: %w", err)
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, fmt.Errorf("stat helper copy: no owner")
	}
	return int(sys.Uid), nil
}
