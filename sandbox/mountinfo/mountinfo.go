// Package mountinfo decodes fields of /proc/<pid>/mountinfo. It is a leaf
// (standard library only), so the static in-container probe and the host
// side share it.
package mountinfo

import (
	"strconv"
	"strings"
)

// Unescape decodes the octal escapes the kernel writes for space, tab,
// newline and backslash in mountinfo paths ("\040" is a space). A backslash
// not followed by three octal digits is kept as is.
func Unescape(s string) string {
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
