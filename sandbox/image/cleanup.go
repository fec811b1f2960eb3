package image

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/mass-dev/mass/internal/pathroot"
	"github.com/mass-dev/mass/sandbox/mountinfo"
)

// cleanupRoot removes a build directory. debootstrap mounts /proc and /sys
// (and sometimes binds /dev) inside the target; if it died half way those
// mounts are still there, and deleting through them would touch the host.
// So everything mounted below dir is detached first, and the directory is
// left in place (with a message) if any mount survives.
func cleanupRoot(dir string, log io.Writer) {
	mounts, err := mountsUnder(dir)
	if err != nil {
		fmt.Fprintf(log, "warning: %v; not removing %s (check for mounts and remove it by hand)\n", err, dir)
		return
	}
	for _, m := range mounts {
		if err := unix.Unmount(m, unix.MNT_DETACH); err != nil {
			fmt.Fprintf(log, "warning: unmount %s: %v\n", m, err)
		}
	}
	left, err := mountsUnder(dir)
	if err != nil {
		fmt.Fprintf(log, "warning: %v; not removing %s\n", err, dir)
		return
	}
	if len(left) > 0 {
		fmt.Fprintf(log, "warning: %s still has mounts (%s); not removing it\n", dir, strings.Join(left, ", "))
		return
	}
	if err := os.RemoveAll(dir); err != nil {
		fmt.Fprintf(log, "warning: remove build dir %s: %v\n", dir, err)
	}
}

// mountsUnder lists mount points at or below dir, deepest first. An
// unreadable mount table is an error: without it nothing is known to be safe.
func mountsUnder(dir string) ([]string, error) {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("list mounts under %s: %w", dir, err)
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		mp := mountinfo.Unescape(f[4])
		if pathroot.Under(mp, dir) {
			out = append(out, mp)
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out, nil
}
