package sandbox

import (
	"errors"
	"strings"
	"testing"
)

func TestValidateEgress(t *testing.T) {
	tests := []struct {
		name string
		mod  func(*Policy)
		want string // "" valid
	}{
		{"ok", func(p *Policy) {}, ""},
		{"with bridge", func(p *Policy) { p.NetworkMode = "bridge" }, "keep network_mode"},
		{"empty allow", func(p *Policy) { p.Egress.Allow = nil }, "allow is empty"},
		{"ip", func(p *Policy) { p.Egress.Allow = []string{"10.0.0.1"} }, "IP address"},
		{"negative cap", func(p *Policy) { p.Egress.MaxBytes = -1 }, "max_bytes"},
	}
	for _, tt := range tests {
		p := DefaultPolicy()
		p.Egress = &Egress{Allow: []string{"api.stlouisfed.org", "*.rcsb.org"}}
		tt.mod(&p)
		err := p.Validate()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.want != "" && (!errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: %v, want ErrInvalid with %q", tt.name, err, tt.want)
		}
	}
}
