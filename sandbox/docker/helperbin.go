package docker

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/mass-dev/mass/sandbox"
)

// HelperMode is the mode of the helper copy mounted into every container:
// executable by anyone, readable by its owner only. The kernel marks a
// process that execs a binary its user cannot read non-dumpable from the
// exec on, so an agent never gets a window to open a starting helper's
// /proc/PID/mem or fds (it would otherwise race the helper's own
// PR_SET_DUMPABLE call and could answer the host in its place).
const HelperMode = 0o711

// installHelper places a copy of the helper binary src, root-owned (when
// the daemon is root) and of mode HelperMode (0755 when readable, a
// weakening), in a directory of the daemon's own below the temporary
// directory, named by its content and mode so that every runtime of the
// same build shares it and nothing is left per run.
func installHelper(src string, readable bool) (string, error) {
	data, err := os.ReadFile(src)
	if err != nil {
		return "", fmt.Errorf("read helper binary: %w", err)
	}
	mode := os.FileMode(HelperMode)
	if readable {
		mode = 0o755
	}
	dir, err := helperDir()
	if err != nil {
		return "", err
	}
	if err := installHostname(dir); err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	bin := filepath.Join(dir, fmt.Sprintf("%x-%o", sum[:12], mode))
	if sameHelper(bin, data, mode) {
		return bin, nil
	}
	tmp, err := os.CreateTemp(dir, ".helper-")
	if err != nil {
		return "", fmt.Errorf("create helper copy: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.Write(data)
	if err := errors.Join(werr, tmp.Close()); err != nil {
		return "", fmt.Errorf("write helper copy: %w", err)
	}
	if os.Geteuid() == 0 {
		if err := os.Chown(tmp.Name(), 0, 0); err != nil {
			return "", fmt.Errorf("chown helper copy: %w", err)
		}
	}
	if err := os.Chmod(tmp.Name(), mode); err != nil {
		return "", fmt.Errorf("chmod helper copy: %w", err)
	}
	if err := os.Rename(tmp.Name(), bin); err != nil {
		return "", fmt.Errorf("install helper copy: %w", err)
	}
	return bin, nil
}

// helperDir makes the directory of the helper copies: sandbox.HelperHostDir
// (mode 0711) for a root daemon, whose name tells the agent nothing of the
// host (F6), else a private directory below the temporary directory.
func helperDir() (string, error) {
	dir, perm := sandbox.HelperHostDir, os.FileMode(0o711)
	if os.Geteuid() != 0 {
		dir, perm = filepath.Join(os.TempDir(), fmt.Sprintf("mass-helper-%d", os.Geteuid())), 0o755
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", fmt.Errorf("make helper dir: %w", err)
	}
	if err := os.Mkdir(dir, perm); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("make helper dir: %w", err)
	}
	if err := checkOwned(dir, os.Geteuid(), true); err != nil {
		return "", err
	}
	return dir, nil
}

// HostnameFile is the name, in the helper directory, of the file every box
// sees as /etc/hostname in place of the engine's per-container file, whose
// mount root names the engine's data root and the container's id (F6).
// The box's UTS hostname is still the agent's name.
const HostnameFile = "hostname"

const hostnameText = "sandbox\n"

// installHostname writes the shared, read-only /etc/hostname file.
func installHostname(dir string) error {
	p := filepath.Join(dir, HostnameFile)
	if b, err := os.ReadFile(p); err == nil && string(b) == hostnameText && checkOwned(p, os.Geteuid(), false) == nil {
		return nil
	}
	tmp, err := os.CreateTemp(dir, ".hostname-")
	if err != nil {
		return fmt.Errorf("create hostname file: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.WriteString(hostnameText)
	if err := errors.Join(werr, tmp.Chmod(0o644), tmp.Close()); err != nil {
		return fmt.Errorf("write hostname file: %w", err)
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return fmt.Errorf("install hostname file: %w", err)
	}
	return nil
}

// sameHelper reports whether bin is already the wanted copy.
func sameHelper(bin string, data []byte, mode os.FileMode) bool {
	st, err := os.Lstat(bin)
	if err != nil || !st.Mode().IsRegular() || st.Mode().Perm() != mode || checkOwned(bin, os.Geteuid(), false) != nil {
		return false
	}
	have, err := os.ReadFile(bin)
	return err == nil && bytes.Equal(have, data)
}

// checkOwned refuses a path that is a link, not owned by uid, or (for a
// directory) writable by others: nobody else may swap the helper.
func checkOwned(p string, uid int, dir bool) error {
	st, err := os.Lstat(p)
	if err != nil {
		return fmt.Errorf("stat %s: %w", p, err)
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok || int(sys.Uid) != uid || dir && (!st.IsDir() || st.Mode().Perm()&0o022 != 0) {
		return fmt.Errorf("%s is not a private directory or file of uid %d: %w", p, uid, errForeignHelper)
	}
	return nil
}

var errForeignHelper = errors.New("helper copy location not owned by this daemon")

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
