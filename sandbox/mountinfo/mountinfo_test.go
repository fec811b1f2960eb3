package mountinfo

import (
	"fmt"
	"strings"
	"testing"
)

func TestUnescape(t *testing.T) {
	for in, want := range map[string]string{
		`/mnt/a\040b`:    "/mnt/a b",
		`/x\011y\012z`:   "/x\ty\nz",
		`/back\134slash`: `/back\slash`,
		`/plain`:         "/plain",
		`/short\04`:      `/short\04`,
		`/not\999octal`:  `/not\999octal`,
		`/over\777`:      `/over\777`, // beyond a byte: kept
		`\040lead`:       " lead",
	} {
		if got := Unescape(in); got != want {
			t.Errorf("Unescape(%q) = %q, want %q", in, got, want)
		}
	}
}

// The kernel's escaping (space, tab, newline, backslash as \ooo) undone by
// Unescape gives back the path.
func FuzzUnescape(f *testing.F) {
	f.Add("/mnt/a b")
	f.Add(`/x\y`)
	f.Fuzz(func(t *testing.T, p string) {
		var b strings.Builder
		for i := 0; i < len(p); i++ {
			switch c := p[i]; c {
			case ' ', '\t', '\n', '\\':
				fmt.Fprintf(&b, `\%03o`, c)
			default:
				b.WriteByte(c)
			}
		}
		if got := Unescape(b.String()); got != p {
			t.Fatalf("Unescape(%q) = %q, want %q", b.String(), got, p)
		}
	})
}
