package egress

import (
	"strings"
	"testing"
)

func TestAllowlistAllows(t *testing.T) {
	a, err := NewAllowlist([]string{"api.stlouisfed.org", "*.rcsb.org"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		host string
		want bool
	}{
		{"api.stlouisfed.org", true},
		{"API.StLouisFed.org.", true},
		{"stlouisfed.org", false},
		{"evil-api.stlouisfed.org", false},
		{"api.stlouisfed.org.evil.com", false},
		{"files.rcsb.org", true},
		{"a.b.rcsb.org", true},
		{"rcsb.org", false},
		{"xrcsb.org", false},
		{"1.2.3.4", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := a.Allows(tt.host); got != tt.want {
			t.Errorf("Allows(%q) = %t, want %t", tt.host, got, tt.want)
		}
	}
	if _, err := NewAllowlist([]string{"ok.org", "10.0.0.1"}); err == nil || !strings.Contains(err.Error(), "allow[1]") {
		t.Errorf("NewAllowlist with an IP = %v, want an error naming allow[1]", err)
	}
}

func TestIPLiteral(t *testing.T) {
	for _, h := range []string{"127.0.0.1", "[::1]", "::ffff:10.0.0.1", "2130706433", "0x7f.1", "127.1"} {
		if !isIPLiteral(h) {
			t.Errorf("isIPLiteral(%q) = false", h)
		}
	}
	for _, h := range []string{"example.org", "a1.example", ""} {
		if isIPLiteral(h) {
			t.Errorf("isIPLiteral(%q) = true", h)
		}
	}
}
