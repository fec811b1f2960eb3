// Package egress is the opt-in network of a task that must download public
// data: a proxy that lets its agents reach a list of domains over HTTP(S)
// and nothing else, answers their DNS itself, caps the bytes of an episode
// and records every request. sandbox/docker runs it in a container of its
// own, the only peer of the agents on an internal network.
package egress

import (
	"fmt"
	"strings"

	"github.com/mass-dev/mass/internal/boxspec"
)

// Defaults of an egress policy.
const (
	// DefaultMaxBytes caps the bytes (both directions) of one episode.
	DefaultMaxBytes = boxspec.DefaultEgressBytes
	// ProxyPort is where the proxy takes HTTP and CONNECT requests.
	ProxyPort = 3128
	// DNSPort is where the proxy answers DNS (UDP and TCP).
	DNSPort = 53
)

// Allowlist matches host names against checked entries.
type Allowlist struct {
	exact  map[string]bool
	suffix []string // ".example.org" for "*.example.org"
}

// NewAllowlist checks every entry (boxspec.CheckDomain, the rule the task
// spec checks too) and builds the matcher.
func NewAllowlist(entries []string) (*Allowlist, error) {
	a := &Allowlist{exact: map[string]bool{}}
	for i, e := range entries {
		if err := boxspec.CheckDomain(e); err != nil {
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
// literals and anything boxspec.CheckDomain refuses never match.
func (a *Allowlist) Allows(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if boxspec.CheckDomain(h) != nil {
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
