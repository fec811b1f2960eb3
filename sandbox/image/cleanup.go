package image

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// cleanupRoot removes a build directory. debootstrap mounts /proc and /sys
// (and sometimes binds /dev) inside the target; if it died half way those
// mounts are still there, and deleting through them would touch the host.
// So everything mounted below dir is detached first, and the directory is
// left in place (with a message) if any mount survives.
func cleanupRoot(dir string, log io.Writer) {
	for _, m := range mountsUnder(dir) {
		if err := unix.Unmount(m, unix.MNT_DETACH); err != nil {
			fmt.Fprintf(log, "warning: unmount %s: %v\n", m, err)
		}
	}
	if left := mountsUnder(dir); len(left) > 0 {
		fmt.Fprintf(log, "warning: %s still has mounts (%s); not removing it\n", dir, strings.Join(left, ", "))
		return
	}
	if err := os.RemoveAll(dir); err != nil {
		fmt.Fprintf(log, "warning: remove build dir %s: %v\n", dir, err)
	}
}

// mountsUnder lists mount points at or below dir, deepest first.
func mountsUnder(dir string) []string {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		mp := unescapeMount(f[4])
		if mp == dir || strings.HasPrefix(mp, dir+"/") {
			out = append(out, mp)
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// unescapeMount decodes the octal escapes (\040 for space) of mountinfo.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
