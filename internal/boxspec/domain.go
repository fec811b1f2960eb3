package boxspec

import (
	"fmt"
	"net/netip"
	"strings"
)

// DefaultEgressBytes caps the bytes (both directions) of one episode with
// egress when its task names no network.max_bytes (egress.DefaultMaxBytes).
const DefaultEgressBytes = 1 << 30

// CheckDomain explains why s is not an allowlist entry, or returns nil. An
// entry is a lower-case host name of at least two labels (letters, digits,
// '-'), optionally prefixed by "*." to match every name below it; never an
// IP address, a port, a scheme, a path or a bare "*".
func CheckDomain(s string) error {
	name := strings.TrimPrefix(s, "*.")
	switch {
	case s == "":
		return fmt.Errorf("is empty")
	case strings.Contains(s, "://"):
		return fmt.Errorf("%q has a scheme; give the host name only, e.g. %q", s, "api.example.org")
	case strings.ContainsAny(s, "/?#@"):
		return fmt.Errorf("%q has a path or user part; give the host name only", s)
	case strings.Contains(name, ":") || strings.HasPrefix(name, "["):
		if _, err := netip.ParseAddr(strings.Trim(name, "[]")); err == nil {
			return fmt.Errorf("%q is an IP address; allow a domain name", s)
		}
		return fmt.Errorf("%q has a port; ports are fixed (80 for http, 443 for https)", s)
	case strings.Contains(name, "*"):
		return fmt.Errorf("%q: a wildcard is allowed only as a leading \"*.\"", s)
	case len(name) > 253:
		return fmt.Errorf("%q is longer than 253 bytes", s)
	}
	if _, err := netip.ParseAddr(name); err == nil {
		return fmt.Errorf("%q is an IP address; allow a domain name", s)
	}
	labels := strings.Split(name, ".")
	if len(labels) < 2 {
		return fmt.Errorf("%q is a single label; give a full domain name such as %q", s, "example.org")
	}
	for _, l := range labels {
		if err := checkLabel(l); err != nil {
			return fmt.Errorf("%q: %v", s, err)
		}
	}
	if allDigits(labels[len(labels)-1]) {
		return fmt.Errorf("%q ends in a numeric label, which reads as an IP address", s)
	}
	return nil
}

func checkLabel(l string) error {
	if l == "" || len(l) > 63 {
		return fmt.Errorf("labels must be 1-63 bytes (no empty label, no trailing dot)")
	}
	if l[0] == '-' || l[len(l)-1] == '-' {
		return fmt.Errorf("label %q starts or ends with '-'", l)
	}
	for _, c := range l {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return fmt.Errorf("label %q has %q; use lower-case letters, digits and '-' (punycode for others)", l, c)
		}
	}
	return nil
}

func allDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}
