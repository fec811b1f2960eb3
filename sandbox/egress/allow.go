// Package egress is the opt-in network of a task that must download public
// data: a proxy that lets its agents reach a list of domains over HTTP(S)
// and nothing else, answers their DNS itself, caps the bytes of an episode
// and records every request. sandbox/docker runs it in a container of its
// own, the only peer of the agents on an internal network.
package egress

import (
	"fmt"
	"net/netip"
	"strings"
)

// Defaults of an egress policy.
const (
	// DefaultMaxBytes caps the bytes (both directions) of one episode.
	DefaultMaxBytes = 1 << 30
	// ProxyPort is where the proxy takes HTTP and CONNECT requests.
	ProxyPort = 3128
	// DNSPort is where the proxy answers DNS (UDP and TCP).
	DNSPort = 53
)

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

// Allowlist matches host names against checked entries.
type Allowlist struct {
	exact  map[string]bool
	suffix []string // ".example.org" for "*.example.org"
}

// NewAllowlist checks every entry (CheckDomain) and builds the matcher.
func NewAllowlist(entries []string) (*Allowlist, error) {
	a := &Allowlist{exact: map[string]bool{}}
	for i, e := range entries {
		if err := CheckDomain(e); err != nil {
			return nil, fmt.Errorf("allow[%d]: %w", i, err)
		}
		if rest, ok := strings.CutPrefix(e, "*."); ok {
			a.suffix = append(a.suffix, "."+rest)
		} else {
			a.exact[e] = true
		}
	}
	return a, nil
}

// Allows reports whether host (a name as a client sent it; case and one
// trailing dot are ignored) is on the list. "*.example.org" matches
// "a.example.org" and "a.b.example.org" but not "example.org". IP
// literals and anything CheckDomain refuses never match.
func (a *Allowlist) Allows(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if CheckDomain(h) != nil {
		return false
	}
	if a.exact[h] {
		return true
	}
	for _, s := range a.suffix {
		if strings.HasSuffix(h, s) {
			return true
		}
	}
	return false
}
