package taskspec

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/mass-dev/mass/internal/boxspec"
)

// MaxAllow bounds the allowlist of one task.
const MaxAllow = 64

// Network opts a task into egress: its agents reach the listed domains
// over HTTP(S) through the episode's proxy, and nothing else. Without it
// they have no network.
//
//	network:
//	  allow: [api.stlouisfed.org, "*.rcsb.org"]
//	  max_bytes: 2GiB   # optional, per episode, both directions
type Network struct {
	Allow    []string `json:"allow" yaml:"allow"`
	MaxBytes int64    `json:"max_bytes,omitempty" yaml:"max_bytes,omitempty"` // 0: boxspec.DefaultEgressBytes
}

func (d *decoder) network(n *yaml.Node) *Network {
	nw := &Network{}
	d.fields(n, "network", []string{"allow", "max_bytes"}, func(k string, v *yaml.Node) {
		switch k {
		case "allow":
			nw.Allow = d.strs(v, "network.allow")
			if v.Kind == yaml.SequenceNode {
				for i, e := range v.Content {
					d.lines[fmt.Sprintf("network.allow[%d]", i)] = e.Line // errors name the entry's own line
				}
			}
		case "max_bytes":
			nw.MaxBytes = d.size(v, "network.max_bytes")
		}
	})
	return nw
}

// checkNetwork validates the allowlist.
func (s *Spec) checkNetwork(bad func(field, format string, args ...any)) {
	nw := s.Network
	if nw == nil {
		return
	}
	if len(nw.Allow) == 0 {
		bad("network.allow", "is required: the domains agents may download from, e.g. allow: [api.stlouisfed.org]; leave network out for none")
		return
	}
	if len(nw.Allow) > MaxAllow {
		bad("network.allow", "has %d entries; the limit is %d", len(nw.Allow), MaxAllow)
	}
	seen := map[string]bool{}
	for i, a := range nw.Allow {
		f := fmt.Sprintf("network.allow[%d]", i)
		if err := boxspec.CheckDomain(a); err != nil {
			bad(f, "%v", err)
			continue
		}
		if seen[strings.ToLower(a)] {
			bad(f, "%q is listed twice", a)
		}
		seen[strings.ToLower(a)] = true
	}
	if _, set := s.lines["network.max_bytes"]; set && nw.MaxBytes < 1<<20 {
		bad("network.max_bytes", "%d is below 1MiB; use e.g. max_bytes: 2GiB, or leave it out for the default %dGiB", nw.MaxBytes, boxspec.DefaultEgressBytes>>30)
	}
}
